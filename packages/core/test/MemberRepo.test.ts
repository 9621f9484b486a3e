import { memberRepoContract } from "../src/testing/MemberRepoContract.js"
import * as Memory from "../src/testing/Memory.js"

// The memory member, role and group repositories share their tables, so they are built together as
// in `Memory.repositories` (see internal/rbacMemory.ts).
memberRepoContract("layerMemory", Memory.repositories)

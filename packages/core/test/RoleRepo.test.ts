import * as Memory from "../src/testing/Memory.js"
import { roleRepoContract } from "../src/testing/RoleRepoContract.js"

// The memory member, role and group repositories share their tables, so they are built together as
// in `Memory.repositories` (see internal/rbacMemory.ts).
roleRepoContract("layerMemory", Memory.repositories)

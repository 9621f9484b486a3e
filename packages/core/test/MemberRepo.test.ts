import * as Layer from "effect/Layer"
import * as GroupRepo from "../src/GroupRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as RoleRepo from "../src/RoleRepo.js"
import { memberRepoContract } from "../src/testing/MemberRepoContract.js"
import * as Transaction from "../src/Transaction.js"

// The three RBAC memory ports share their tables when built together (see internal/rbacMemory.ts).
const memory = Layer.mergeAll(
  MemberRepo.layerMemory,
  RoleRepo.layerMemory,
  GroupRepo.layerMemory,
  OrganizationRepo.layerMemory
).pipe(Layer.provideMerge(Transaction.layerMemory))

memberRepoContract("layerMemory", memory)

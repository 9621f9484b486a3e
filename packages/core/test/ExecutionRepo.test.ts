import * as Layer from "effect/Layer"
import * as ExecutionRepo from "../src/ExecutionRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as SandboxRepo from "../src/SandboxRepo.js"
import { executionRepoContract } from "../src/testing/ExecutionRepoContract.js"
import * as Transaction from "../src/Transaction.js"

executionRepoContract(
  "ExecutionRepo.layerMemory",
  Layer.mergeAll(
    ExecutionRepo.layerMemory,
    SandboxRepo.layerMemory,
    OrganizationRepo.layerMemory,
    MemberRepo.layerMemory
  ).pipe(Layer.provideMerge(Transaction.layerMemory))
)

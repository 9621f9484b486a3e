import * as Layer from "effect/Layer"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as SandboxRepo from "../src/SandboxRepo.js"
import { sandboxRepoContract } from "../src/testing/SandboxRepoContract.js"
import * as Transaction from "../src/Transaction.js"

sandboxRepoContract(
  "SandboxRepo.layerMemory",
  Layer.mergeAll(SandboxRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

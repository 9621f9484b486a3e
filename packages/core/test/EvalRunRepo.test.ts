import * as Layer from "effect/Layer"
import * as EvalRunRepo from "../src/EvalRunRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { evalRunRepoContract } from "../src/testing/EvalRunRepoContract.js"
import * as Transaction from "../src/Transaction.js"

evalRunRepoContract(
  "EvalRunRepo.layerMemory",
  Layer.mergeAll(EvalRunRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

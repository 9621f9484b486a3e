import * as Layer from "effect/Layer"
import * as ChangeRepo from "../src/ChangeRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { changeRepoContract } from "../src/testing/ChangeRepoContract.js"
import * as Transaction from "../src/Transaction.js"

changeRepoContract(
  "memory",
  Layer.mergeAll(ChangeRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

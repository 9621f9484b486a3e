import * as Layer from "effect/Layer"
import * as AppRepo from "../src/AppRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { appRepoContract } from "../src/testing/AppRepoContract.js"
import * as Transaction from "../src/Transaction.js"

appRepoContract(
  "AppRepo.layerMemory",
  Layer.mergeAll(AppRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

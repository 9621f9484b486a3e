import * as Layer from "effect/Layer"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as SessionRepo from "../src/SessionRepo.js"
import { sessionRepoContract } from "../src/testing/SessionRepoContract.js"
import * as Transaction from "../src/Transaction.js"

sessionRepoContract(
  "SessionRepo.layerMemory",
  Layer.mergeAll(SessionRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

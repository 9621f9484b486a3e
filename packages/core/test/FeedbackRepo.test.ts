import * as Layer from "effect/Layer"
import * as FeedbackRepo from "../src/FeedbackRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { feedbackRepoContract } from "../src/testing/FeedbackRepoContract.js"
import * as Transaction from "../src/Transaction.js"

feedbackRepoContract(
  "FeedbackRepo.layerMemory",
  Layer.mergeAll(FeedbackRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

import * as Layer from "effect/Layer"
import * as ChatRepo from "../src/ChatRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { chatRepoContract } from "../src/testing/ChatRepoContract.js"
import * as Transaction from "../src/Transaction.js"

chatRepoContract(
  "ChatRepo.layerMemory",
  Layer.mergeAll(ChatRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

import * as Layer from "effect/Layer"
import * as ChatChannelRepo from "../src/ChatChannelRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { chatChannelRepoContract } from "../src/testing/ChatChannelRepoContract.js"
import * as Transaction from "../src/Transaction.js"

chatChannelRepoContract(
  "ChatChannelRepo.layerMemory",
  Layer.mergeAll(ChatChannelRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

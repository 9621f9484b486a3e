import * as Layer from "effect/Layer"
import * as ChatRepo from "../src/ChatRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as PlaybookRepo from "../src/PlaybookRepo.js"
import { playbookRepoContract } from "../src/testing/PlaybookRepoContract.js"
import * as Transaction from "../src/Transaction.js"

playbookRepoContract(
  "PlaybookRepo.layerMemory",
  Layer.mergeAll(
    PlaybookRepo.layerMemory,
    ChatRepo.layerMemory,
    OrganizationRepo.layerMemory,
    MemberRepo.layerMemory
  ).pipe(Layer.provideMerge(Transaction.layerMemory))
)

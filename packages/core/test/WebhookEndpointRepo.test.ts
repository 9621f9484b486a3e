import * as Layer from "effect/Layer"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { webhookEndpointRepoContract } from "../src/testing/WebhookEndpointRepoContract.js"
import * as Transaction from "../src/Transaction.js"
import * as WebhookEndpointRepo from "../src/WebhookEndpointRepo.js"

webhookEndpointRepoContract(
  "WebhookEndpointRepo.layerMemory",
  Layer.mergeAll(WebhookEndpointRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

import * as Layer from "effect/Layer"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as OutboundEventRepo from "../src/OutboundEventRepo.js"
import { outboundEventRepoContract } from "../src/testing/OutboundEventRepoContract.js"
import * as Transaction from "../src/Transaction.js"
import * as WebhookEndpointRepo from "../src/WebhookEndpointRepo.js"

outboundEventRepoContract(
  "OutboundEventRepo.layerMemory",
  Layer.mergeAll(
    OutboundEventRepo.layerMemory,
    WebhookEndpointRepo.layerMemory,
    OrganizationRepo.layerMemory,
    MemberRepo.layerMemory
  ).pipe(Layer.provideMerge(Transaction.layerMemory))
)

import * as Layer from "effect/Layer"
import * as ConnectorRepo from "../src/ConnectorRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { connectorRepoContract } from "../src/testing/ConnectorRepoContract.js"
import * as Transaction from "../src/Transaction.js"

connectorRepoContract(
  "ConnectorRepo.layerMemory",
  Layer.mergeAll(ConnectorRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

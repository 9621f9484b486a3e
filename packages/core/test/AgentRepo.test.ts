import * as Layer from "effect/Layer"
import * as AgentRepo from "../src/AgentRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { agentRepoContract } from "../src/testing/AgentRepoContract.js"
import * as Transaction from "../src/Transaction.js"

agentRepoContract(
  "AgentRepo.layerMemory",
  Layer.mergeAll(AgentRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provideMerge(Transaction.layerMemory)
  )
)

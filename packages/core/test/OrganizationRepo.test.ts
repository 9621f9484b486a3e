import * as Layer from "effect/Layer"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { organizationRepoContract } from "../src/testing/OrganizationRepoContract.js"
import * as Transaction from "../src/Transaction.js"

organizationRepoContract(
  "layerMemory",
  OrganizationRepo.layerMemory.pipe(Layer.provideMerge(Transaction.layerMemory))
)

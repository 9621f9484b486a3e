import * as Layer from "effect/Layer"
import * as ApiKeyRepo from "../src/ApiKeyRepo.js"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as RoleRepo from "../src/RoleRepo.js"
import { apiKeyRepoContract } from "../src/testing/ApiKeyRepoContract.js"
import * as Transaction from "../src/Transaction.js"

apiKeyRepoContract(
  "ApiKeyRepo.layerMemory",
  Layer.mergeAll(
    ApiKeyRepo.layerMemory,
    AuditLogRepo.layerMemory,
    OrganizationRepo.layerMemory,
    MemberRepo.layerMemory,
    RoleRepo.layerMemory
  ).pipe(Layer.provideMerge(Transaction.layerMemory))
)

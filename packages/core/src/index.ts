/**
 * @sightline/core: every Sightline resource, rule, transition and port, as Effect schemas and services.
 *
 * @since 0.1.0
 */
export * as ApiKey from "./ApiKey.js"
export * as ApiKeyRepo from "./ApiKeyRepo.js"
export * as AuditLog from "./AuditLog.js"
export * as AuditLogRepo from "./AuditLogRepo.js"
export * as Decision from "./Decision.js"
export * as Errors from "./Errors.js"
export * as Group from "./Group.js"
export * as GroupRepo from "./GroupRepo.js"
export * as IdGenerator from "./IdGenerator.js"
export * as Ids from "./Ids.js"
export * as Member from "./Member.js"
export * as MemberRepo from "./MemberRepo.js"
export * as Organization from "./Organization.js"
export * as OrganizationRepo from "./OrganizationRepo.js"
export * as Pagination from "./Pagination.js"
export * as Permission from "./Permission.js"
export * as Policy from "./Policy.js"
export * as Role from "./Role.js"
export * as RoleRepo from "./RoleRepo.js"
export * as ScimGroupMapping from "./ScimGroupMapping.js"
export * as Secret from "./Secret.js"
export * as ServiceAccount from "./ServiceAccount.js"
export * as Transaction from "./Transaction.js"

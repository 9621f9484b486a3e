/**
 * @sightline/sql: Sightline's persistence over `@effect/sql`, on PostgreSQL or embedded PGlite.
 *
 * @since 0.1.0
 */
export * as AgentRepoSql from "./AgentRepoSql.js"
export * as ApiKeyRepoSql from "./ApiKeyRepoSql.js"
export * as AppRepoSql from "./AppRepoSql.js"
export * as AuditLogRepoSql from "./AuditLogRepoSql.js"
export * as ChangeRepoSql from "./ChangeRepoSql.js"
export * as ChatRepoSql from "./ChatRepoSql.js"
export * as ConnectorRepoSql from "./ConnectorRepoSql.js"
export * as ExecutionPurge from "./ExecutionPurge.js"
export * as ExecutionRepoSql from "./ExecutionRepoSql.js"
export * as GroupRepoSql from "./GroupRepoSql.js"
export * as JobQueueSql from "./JobQueueSql.js"
export * as LibraryStoreSql from "./LibraryStoreSql.js"
export * as MemberRepoSql from "./MemberRepoSql.js"
export * as Migrations from "./Migrations.js"
export * as OrganizationRepoSql from "./OrganizationRepoSql.js"
export * as PgliteClient from "./PgliteClient.js"
export * as PlaybookRepoSql from "./PlaybookRepoSql.js"
export * as PostgresClient from "./PostgresClient.js"
export * as RateLimiterSql from "./RateLimiterSql.js"
export * as RoleRepoSql from "./RoleRepoSql.js"
export * as SandboxRepoSql from "./SandboxRepoSql.js"
export * as SqlStore from "./SqlStore.js"
export * as SqlTransaction from "./SqlTransaction.js"
export * as TablePrefix from "./TablePrefix.js"

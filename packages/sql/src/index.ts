/**
 * @sightline/sql: Sightline's persistence over `@effect/sql`, on PostgreSQL or embedded PGlite.
 *
 * @since 0.1.0
 */
export * as MemberRepoSql from "./MemberRepoSql.js"
export * as Migrations from "./Migrations.js"
export * as OrganizationRepoSql from "./OrganizationRepoSql.js"
export * as PgliteClient from "./PgliteClient.js"
export * as PostgresClient from "./PostgresClient.js"
export * as SqlStore from "./SqlStore.js"
export * as SqlTransaction from "./SqlTransaction.js"
export * as TablePrefix from "./TablePrefix.js"

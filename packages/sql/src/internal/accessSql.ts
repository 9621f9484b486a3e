/**
 * Helpers shared by the access-control repositories (roles, groups, API keys, audit log).
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Predicate from "effect/Predicate"
import type { TablePrefix } from "../TablePrefix.js"

/** SQLSTATE `foreign_key_violation`. */
export const foreignKeyViolation = "23503"

/**
 * Whether `error` is a foreign key violation of one of the named constraints: a row refers to
 * something that is not there (in the organization), or something still referred to was deleted.
 */
export const isForeignKeyViolation = (...constraints: ReadonlyArray<string>) => (error: unknown): boolean => {
  if (!(error instanceof SqlError) || !Predicate.isObject(error.cause)) return false
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown }
  return cause.code === foreignKeyViolation && typeof cause.constraint === "string" &&
    constraints.includes(cause.constraint)
}

/** Deduplicated, sorted ids (core's canonical form of an id set), as a plain array for a parameter. */
export const idSet = (ids: Iterable<string>): Array<string> => Array.from(new Set(ids)).sort()

/** The columns of `<prefix>members`, in the order the repositories select them. */
export const memberColumns = [
  "id",
  "organization_id",
  "email",
  "name",
  "description",
  "is_service_account",
  "is_scim_managed",
  "deleted_at",
  "created_at"
] as const

/** The columns of `<prefix>roles`, in the order the repositories select them. */
export const roleColumns = [
  "id",
  "organization_id",
  "name",
  "description",
  "is_system",
  "is_scim_managed",
  "permissions",
  "default_model_id",
  "allowed_model_ids",
  "allow_model_choice",
  "created_at",
  "updated_at"
] as const

/**
 * The ids of the roles a member holds, directly or through its groups: a subquery over the
 * assignment and group indexes (`RoleRepo.heldBy`, and authentication's one statement). The
 * organization and member are values or column references (`sql.literal("k.member_id")`).
 */
export const heldRoleIds = (
  sql: SqlClient.SqlClient,
  prefix: TablePrefix.Service,
  organizationId: string | Statement.Fragment,
  memberId: string | Statement.Fragment
): Statement.Statement<unknown> =>
  sql`SELECT mr.role_id FROM ${sql(prefix.name("member_roles"))} mr
      WHERE mr.organization_id = ${organizationId} AND mr.member_id = ${memberId}
      UNION
      SELECT gr.role_id FROM ${sql(prefix.name("group_members"))} gm
      JOIN ${
    sql(prefix.name("group_roles"))
  } gr ON gr.organization_id = gm.organization_id AND gr.group_id = gm.group_id
      WHERE gm.organization_id = ${organizationId} AND gm.member_id = ${memberId}`

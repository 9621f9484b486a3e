/**
 * Helpers shared by the access-control repositories (roles, groups, API keys, audit log).
 *
 * @internal
 */
import { SqlError } from "@effect/sql/SqlError"
import * as Predicate from "effect/Predicate"

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

/**
 * Reading PostgreSQL error codes (SQLSTATE) off a `SqlError`. The `pg` driver and PGlite both put
 * the server's error on `cause`, with the same `code` and `constraint` fields.
 *
 * @internal
 */
import { SqlError } from "@effect/sql/SqlError"
import * as Predicate from "effect/Predicate"

/** SQLSTATE `unique_violation`. */
export const uniqueViolation = "23505"

const serverError = (error: unknown): { readonly code?: unknown; readonly constraint?: unknown } | undefined =>
  error instanceof SqlError && Predicate.isObject(error.cause) ? error.cause : undefined

/**
 * Whether `error` is a unique violation of the named constraint or unique index. A plain predicate,
 * not a type guard: other `SqlError`s stay in the error channel.
 */
export const isUniqueViolation = (constraint: string) => (error: unknown): boolean => {
  const cause = serverError(error)
  return cause?.code === uniqueViolation && cause.constraint === constraint
}

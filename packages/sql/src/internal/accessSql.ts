/**
 * Helpers shared by the access-control repositories (roles, groups, API keys, audit log).
 *
 * @internal
 */
import { SqlError } from "@effect/sql/SqlError"
import type * as Pagination from "@sightline/core/Pagination"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
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

/** A lowercase UUID, the only form of id the tables hold (they compare bytewise like core's strings). */
export const isLowercaseUuid = (value: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)

/**
 * The position a keyset page continues after, as query parameters. Core's cursors hold the RFC 3339
 * time and the UUID of a row; anything else (a forged cursor) names no row of a listing, and since
 * the port has no error for it, it is a defect rather than a silently wrong page.
 */
export const keysetBound = (after: Pagination.Keyset): Effect.Effect<{ readonly at: Date; readonly id: string }> =>
  Option.match(
    Option.filter(DateTime.make(after.at), (at) => DateTime.formatIso(at) === after.at && isLowercaseUuid(after.id)),
    {
      onNone: () => Effect.dieMessage(`malformed keyset position ${JSON.stringify(after)}`),
      onSome: (at) => Effect.succeed({ at: DateTime.toDateUtc(at), id: after.id })
    }
  )

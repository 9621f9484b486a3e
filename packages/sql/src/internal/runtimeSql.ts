/**
 * Helpers shared by the runtime repositories (sandboxes, executions, agents, apps, jobs).
 *
 * @internal
 */
import type * as Pagination from "@sightline/core/Pagination"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** A lowercase UUID: how PostgreSQL prints a `uuid`, and the form core's ids take. */
export const isLowercaseUuid = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)

/**
 * The position a keyset page continues after, as query parameters. Core's cursors hold the row's
 * RFC 3339 time (as `DateTime.formatIso` writes it) and its id; anything else (a forged cursor)
 * names no row of a listing, and since the ports have no error for it, it is a defect rather than a
 * silently wrong page.
 */
export const keysetBound = (
  after: Pagination.Keyset,
  validId: (id: string) => boolean
): Effect.Effect<{ readonly at: Date; readonly id: string }> =>
  Option.match(
    Option.filter(DateTime.make(after.at), (at) => DateTime.formatIso(at) === after.at && validId(after.id)),
    {
      onNone: () => Effect.dieMessage(`malformed keyset position ${JSON.stringify(after)}`),
      onSome: (at) => Effect.succeed({ at: DateTime.toDateUtc(at), id: after.id })
    }
  )

/**
 * A JSON value as a query parameter: its text, which the statement casts (`::text::jsonb`). Both
 * drivers then send the same string and PostgreSQL parses it, whereas an object parameter would be
 * serialized differently by each driver (and a string would be taken for a JSON string).
 */
export const jsonText = (value: unknown): string => JSON.stringify(value)

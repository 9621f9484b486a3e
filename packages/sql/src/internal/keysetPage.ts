/**
 * The one way the repositories page a newest-first listing by keyset: `(created_at, id) < (…)`
 * after a cursor's row, one row more than the page to know whether another page exists.
 *
 * @internal
 */
import * as Pagination from "@sightline/core/Pagination"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** A lowercase UUID: how PostgreSQL prints a `uuid`, and the only form of id the tables hold. */
export const isLowercaseUuid = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)

/** Where a page starts, as query parameters: after the cursor's row (absent on the first page), and how many rows to fetch. */
export interface Position<Id extends string> {
  readonly after_at?: Date
  readonly after_id?: Id
  readonly limit: number
}

/**
 * One page of a listing. Core's cursors hold the row's RFC 3339 time (as `DateTime.formatIso`
 * writes it) and its id; anything else (a forged cursor) names no row, and since the ports have no
 * error for it, it is a defect rather than a silently wrong page.
 */
export const page = <Row, Id extends string, E, R>(
  options: {
    readonly after: Pagination.Keyset | undefined
    readonly limit: number
    /** Brands a cursor's id, or none when it is not an id of this listing (default: a lowercase UUID). */
    readonly id: (raw: string) => Option.Option<Id>
    readonly keyset: (row: Row) => Pagination.Keyset
  },
  fetch: (position: Position<Id>) => Effect.Effect<ReadonlyArray<Row>, E, R>
): Effect.Effect<Pagination.Page<Row>, E, R> => {
  const after = options.after
  const limit = options.limit + 1
  const position: Effect.Effect<Position<Id>> = after === undefined
    ? Effect.succeed({ limit })
    : Option.match(
      Option.all([
        Option.filter(DateTime.make(after.at), (at) => DateTime.formatIso(at) === after.at),
        options.id(after.id)
      ]),
      {
        onNone: () => Effect.dieMessage(`malformed keyset position ${JSON.stringify(after)}`),
        onSome: ([at, id]) => Effect.succeed({ after_at: DateTime.toDateUtc(at), after_id: id, limit })
      }
    )
  return Effect.map(
    Effect.flatMap(position, fetch),
    (rows) => Pagination.pageFromRows(rows, options.limit, options.keyset)
  )
}

/** The `id` option for listings keyed by a UUID id brand. */
export const uuidId = <Id extends string>(brand: (raw: string) => Id) => (raw: string): Option.Option<Id> =>
  isLowercaseUuid(raw) ? Option.some(brand(raw)) : Option.none()

/**
 * Pagination as the spec has it: offsets for chats and playbooks, opaque keyset cursors (also called
 * page tokens) for executions, sandboxes, audit logs, changes and API keys.
 *
 * A cursor is the base64url encoding of the last row's sort key and id. It is opaque to clients and
 * stable under inserts: a page continues strictly after the row it names, whatever was added since.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Schema from "effect/Schema"
import { InvalidRequest } from "./Errors.js"

// Keyset positions are RFC 3339 instants in UTC as `DateTime.formatIso` writes them; anything else
// in a cursor was not written by Sightline and would only reach the database to fail there.
const IsoInstant = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/),
  Schema.filter((at) => !Number.isNaN(Date.parse(at)))
)

/**
 * The position of a row in a keyset ordered by `(at desc, id desc)`: its timestamp and its id.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Keyset = Schema.Struct({
  /** The RFC 3339 UTC timestamp of the last row of a page. */
  at: IsoInstant,
  /** The id of the last row of a page: breaks ties between equal timestamps. */
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})
export type Keyset = typeof Keyset.Type

const KeysetJson = Schema.parseJson(Keyset)

/**
 * Encodes a keyset position as an opaque cursor string.
 *
 * @since 0.1.0
 * @category utils
 */
export const encodeCursor = (keyset: Keyset): string => Encoding.encodeBase64Url(Schema.encodeSync(KeysetJson)(keyset))

const invalidCursor = () => new InvalidRequest({ message: "invalid cursor" })

/**
 * Decodes an opaque cursor; anything that is not one of ours is `invalid_request`. `id` narrows the
 * row id (for example `Schema.UUID` for listings of UUID-keyed rows), so a forged cursor is refused
 * here rather than by the database.
 *
 * @since 0.1.0
 * @category utils
 */
export const decodeCursor = (
  cursor: string,
  id: Schema.Schema<string> = Schema.String
): Effect.Effect<Keyset, InvalidRequest> =>
  Either.match(Encoding.decodeBase64UrlString(cursor), {
    onLeft: () => Effect.fail(invalidCursor()),
    onRight: (json) =>
      Schema.decodeUnknown(KeysetJson)(json).pipe(
        Effect.tap((keyset) => Schema.decodeUnknown(id)(keyset.id)),
        Effect.mapError(invalidCursor)
      )
  })

/**
 * A page of a keyset listing: the rows and, when more exist, the cursor of the next page.
 *
 * @since 0.1.0
 * @category models
 */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

/**
 * What a repository needs to read one keyset page: at most `limit` rows strictly after `after`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PageRequest {
  readonly limit: number
  readonly after?: Keyset | undefined
}

/**
 * Builds a page from `limit + 1` rows read in keyset order: the extra row only says that another
 * page exists, and the cursor names the last row returned.
 *
 * @since 0.1.0
 * @category utils
 */
export const pageFromRows = <A>(
  rows: ReadonlyArray<A>,
  limit: number,
  keysetOf: (a: A) => Keyset
): Page<A> => {
  if (rows.length <= limit) return { items: rows, nextCursor: undefined }
  const items = rows.slice(0, limit)
  return { items, nextCursor: encodeCursor(keysetOf(items[items.length - 1]!)) }
}

/**
 * Compares two keysets in listing order (newest first): negative when `a` comes before `b`.
 *
 * @since 0.1.0
 * @category utils
 */
export const compareDesc = (a: Keyset, b: Keyset): number =>
  a.at === b.at ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.at < b.at ? 1 : -1

/**
 * Reads one keyset page out of rows held in memory (the memory repositories' listing): keeps the
 * rows strictly after `request.after`, sorts them newest first and builds the page of `request.limit`.
 *
 * @since 0.1.0
 * @category utils
 */
export const pageInMemory = <A>(
  rows: ReadonlyArray<A>,
  request: PageRequest,
  keysetOf: (a: A) => Keyset
): Page<A> => {
  const { after } = request
  const matching = rows.filter((row) => after === undefined || compareDesc(keysetOf(row), after) > 0)
  matching.sort((a, b) => compareDesc(keysetOf(a), keysetOf(b)))
  return pageFromRows(matching.slice(0, request.limit + 1), request.limit, keysetOf)
}

/**
 * A `limit` query parameter: an integer in `[min, max]`, `fallback` when absent.
 *
 * @since 0.1.0
 * @category utils
 */
export const limitParam = (min: number, max: number, fallback: number) =>
  Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max)),
    { default: () => fallback }
  )

/**
 * An `offset` query parameter: an integer >= 0, 0 when absent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const offsetParam = Schema.optionalWith(
  // A skip count past the largest row count a table can hold pages nothing, and `bigint` OFFSET limits it.
  Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative(), Schema.lessThanOrEqualTo(2_147_483_647)),
  { default: () => 0 }
)

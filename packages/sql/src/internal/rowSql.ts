/**
 * Rows as statements take them: the one way the repositories map a record's optional fields to
 * NULL columns and write records with `sql.insert` / `sql.update`.
 *
 * @internal
 */
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** An optional field stored as a NULL column (NULL decodes to absent, absent encodes to no key). */
export const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

/**
 * The values of `columns` in an encoded row, for `sql.insert` and `sql.update`. An absent optional
 * field is NULL, so an update clears a field that became absent rather than skipping it. The `json`
 * columns go as their JSON text: PostgreSQL parses it for the `jsonb` column, and both drivers send a
 * string alike (they serialize an object or array parameter differently).
 */
export const values = (
  row: object,
  columns: ReadonlyArray<string>,
  json: ReadonlyArray<string> = []
): Record<string, unknown> => {
  const record = row as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const column of columns) {
    const value = record[column]
    out[column] = value === undefined || value === null ? null : json.includes(column) ? JSON.stringify(value) : value
  }
  return out
}

/** A JSON value as a statement parameter that the statement casts (`::text::jsonb`): its text (see `values`). */
/**
 * A select list of `names` (each prefixed with `alias`), reading `audience` (`''` in the row for the
 * audience without client attributes) as NULL, so that a record made without one reads back without.
 */
export const selectList = (names: ReadonlyArray<string>, alias = ""): string =>
  names.map((name) => name === "audience" ? `nullif(${alias}audience, '') AS audience` : `${alias}${name}`).join(", ")

export const jsonText = (value: unknown): string => JSON.stringify(value)

/**
 * The columns of one table in a joined row, whose columns carry a prefix per table (`k_id`,
 * `r_name`): the fields `names`, without the prefix, for that table's row schema.
 */
export const fieldsOf = (
  row: Record<string, unknown>,
  prefix: string,
  names: ReadonlyArray<string>
): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const name of names) fields[name] = row[`${prefix}${name}`]
  return fields
}

/**
 * Rows read as JSON (`json_agg(...)::text`), with the timestamps of `columns` turned from JSON's text
 * into the `Date`s the driver would have returned (a NULL stays null). Both truncate to milliseconds.
 */
export const datesIn = (
  rows: Array<Record<string, unknown>>,
  columns: ReadonlyArray<string>
): Array<Record<string, unknown>> => {
  for (const row of rows) {
    for (const column of columns) {
      const value = row[column]
      if (typeof value === "string") row[column] = new Date(value)
    }
  }
  return rows
}

/**
 * `SqlSchema.findAll` for a hot read of the service's own rows: the request and the rows go
 * through `TrustedSchema` (the schemas' transformations, without checking them again).
 */
export const trustedAll = <IA, II, A, AI, E, R>(options: {
  readonly Request: Schema.Schema<IA, II>
  readonly Result: Schema.Schema<A, AI>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}): (request: IA) => Effect.Effect<ReadonlyArray<A>, E, R> => {
  const encode = TrustedSchema.encoder(options.Request)
  const decode = TrustedSchema.decoder(Schema.Array(options.Result))
  return (request) =>
    Effect.flatMap(Effect.suspend(() => options.execute(encode(request))), (rows) => Effect.sync(() => decode(rows)))
}

/**
 * `SqlSchema.single` for a statement on every answer's path: the request is a record the service
 * made and the row one it wrote, so both go through `TrustedSchema` (the schemas' transformations,
 * without checking them again). A statement without a row fails with `NoSuchElementException`.
 */
export const trustedSingle = <IA, II, A, AI, E, R>(options: {
  readonly Request: Schema.Schema<IA, II>
  readonly Result: Schema.Schema<A, AI>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}): (request: IA) => Effect.Effect<A, E | Cause.NoSuchElementException, R> => {
  const encode = TrustedSchema.encoder(options.Request)
  const decode = TrustedSchema.decoder(options.Result)
  return (request) =>
    Effect.flatMap(
      Effect.suspend(() => options.execute(encode(request))),
      (rows) => rows.length > 0 ? Effect.sync(() => decode(rows[0])) : Effect.fail(new Cause.NoSuchElementException())
    )
}

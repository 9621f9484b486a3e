import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Pg from "pg"
import * as Timestamptz from "../src/internal/timestamptz.js"
import { forEachDatabase } from "./utils/databases.js"

// `pg`'s own parser (`postgres-date`): what every text must read as.
const standard = Pg.types.getTypeParser(Timestamptz.TIMESTAMPTZ_OID, "text") as (text: string) => unknown
const time = (value: unknown) => (value instanceof Date ? value.getTime() : value)

describe("Timestamptz.parse", () => {
  it("reads every form PostgreSQL prints as pg's own parser does", () => {
    const texts: Array<string> = []
    // Instants over two centuries, with 0 to 6 fraction digits and whole-hour offsets either side.
    for (let i = 0; i < 2000; i++) {
      const instant = new Date(Date.UTC(1900, 0, 1) + i * 3_155_760_123_457 / 1000 * 1.7)
      const iso = instant.toISOString().replace("T", " ").replace("Z", "")
      const digits = i % 7
      const base = digits === 0
        ? iso.slice(0, 19)
        : `${iso.slice(0, 19)}.${`${iso.slice(20, 23)}${i % 1000}`.slice(0, digits)}`
      texts.push(`${base}+00`, `${base}-05`, `${base}+14`, `${base}-12`)
    }
    // The forms that go to pg's parser: other offsets, BC, infinity, short and long years, dates.
    texts.push(
      "2026-11-25 06:52:03.938123+05:30",
      "2026-11-25 06:52:03-03:30:15",
      "2026-11-25 06:52:03+00 BC",
      "0044-03-15 12:00:00+00 BC",
      "0099-12-31 23:59:59.999+00",
      "0001-01-01 00:00:00+00",
      "12026-11-25 06:52:03+00",
      "infinity",
      "-infinity",
      "2026-11-25",
      "2026-11-25 06:52:03Z",
      "2026-11-25T06:52:03+00",
      "2026-1a-25 06:52:03+00"
    )
    const differing = texts.filter((text) => time(Timestamptz.parse(text)) !== time(standard(text)))
    expect(differing).toEqual([])
    // The fast reading is the one taken for the common form (not the fallback for everything).
    expect(Timestamptz.parse("2026-11-25 06:52:03.938123+00")).toEqual(new Date("2026-11-25T06:52:03.938Z"))
  })
})

// PGlite parses its own rows; the parser is `PostgresClient`'s.
forEachDatabase((database) => {
  if (database.name !== "postgres") return
  describe(`timestamptz read back (${database.name})`, () => {
    it.effect("a stored instant reads back the same under any whole-hour session time zone", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const instants = ["2026-11-25T06:52:03.938Z", "1999-12-31T23:59:59.001Z", "2024-02-29T12:00:00.000Z"]
        yield* sql.withTransaction(Effect.gen(function*() {
          for (const zone of ["UTC", "America/New_York", "Asia/Tokyo"]) {
            yield* sql`SELECT set_config('TimeZone', ${zone}, true)`
            const rows = yield* sql<{ readonly at: Date; readonly text: string }>`
              SELECT v.at, v.at::text AS text FROM unnest(${instants}::timestamptz[]) AS v(at)`
            expect(rows.map((row) => row.at.toISOString())).toEqual(instants)
            // PostgreSQL printed them in the session's zone, which pg's parser reads the same.
            expect(rows.map((row) => time(Timestamptz.parse(row.text)))).toEqual(
              rows.map((row) => time(standard(row.text)))
            )
          }
        }))
      }).pipe(Effect.provide(database.client)))
  })
})

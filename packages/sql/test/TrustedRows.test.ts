/**
 * The row schemas that the hot reads and every answer's end go through `TrustedSchema` with: for
 * every record, the trusted codecs answer what `Schema` does (the rows as the driver gives them:
 * dates as `Date`s, NULL for an absent field).
 */
import { describe, expect, it } from "@effect/vitest"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Arbitrary from "effect/Arbitrary"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { ApiKeyFromRow } from "../src/ApiKeyRepoSql.js"
import { AssetFromRow, CellFromRow, ChatFromRow, MessageFromRow } from "../src/ChatRepoSql.js"
import { MemberFromRow } from "../src/MemberRepoSql.js"
import { PlaybookFromRow, ReportFromRow } from "../src/PlaybookRepoSql.js"

const agrees = <A, I>(name: string, schema: Schema.Schema<A, I>) =>
  it(`${name}: as Schema encodes and decodes it`, () =>
    FastCheck.assert(
      FastCheck.property(Arbitrary.make(schema), (record) => {
        const row = Schema.encodeSync(schema)(record)
        expect(TrustedSchema.encoder(schema)(record)).toStrictEqual(row)
        expect(TrustedSchema.decoder(schema)(row)).toStrictEqual(Schema.decodeUnknownSync(schema)(row))
      }),
      { numRuns: 100 }
    ))

describe("TrustedSchema over the row schemas", () => {
  agrees("a chat", ChatFromRow)
  agrees("a message", MessageFromRow)
  agrees("a cell (its NULL columns)", CellFromRow)
  agrees("an asset", AssetFromRow)
  agrees("a playbook", PlaybookFromRow)
  agrees("a report", ReportFromRow)
  agrees("an API key", ApiKeyFromRow)
  agrees("a member", MemberFromRow)

  it("a NULL column decodes to an absent field", () => {
    const row = Schema.encodeSync(CellFromRow)(FastCheck.sample(Arbitrary.make(CellFromRow), 1)[0]!)
    const withNulls = { ...row, error: null, code: null, output: null }
    const decoded = TrustedSchema.decoder(CellFromRow)(withNulls)
    expect(decoded).toStrictEqual(Schema.decodeUnknownSync(CellFromRow)(withNulls))
    expect("error" in decoded && decoded.error !== undefined).toBe(false)
  })
})

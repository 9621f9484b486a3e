import { describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as DateTime from "effect/DateTime"
import * as Equal from "effect/Equal"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Chat from "../src/Chat.js"
import * as ChatEvent from "../src/ChatEvent.js"
import { ChatId } from "../src/Ids.js"
import * as Playbook from "../src/Playbook.js"
import * as TrustedSchema from "../src/TrustedSchema.js"

/** For every value `schema` generates, the trusted encoder answers what `Schema.encodeSync` does. */
const agreesWithSchema = <A, I>(schema: Schema.Schema<A, I>, runs = 200) =>
  FastCheck.assert(
    FastCheck.property(Arbitrary.make(schema), (value) => {
      const trusted = TrustedSchema.encoder(schema)(value)
      const checked = Schema.encodeSync(schema)(value)
      // Compared as the wire sees them (property order included), and as values.
      expect(JSON.stringify(trusted)).toBe(JSON.stringify(checked))
      expect(trusted).toStrictEqual(checked)
    }),
    { numRuns: runs }
  )

/** For every encoded value of `schema`, the trusted decoder answers what `Schema.decodeUnknownSync` does. */
const decodesAsSchema = <A, I>(schema: Schema.Schema<A, I>, runs = 200) =>
  FastCheck.assert(
    FastCheck.property(Arbitrary.make(schema), (value) => {
      const encoded = Schema.encodeSync(schema)(value)
      expect(TrustedSchema.decoder(schema)(encoded)).toStrictEqual(Schema.decodeUnknownSync(schema)(encoded))
    }),
    { numRuns: runs }
  )

class Row extends Schema.Class<Row>("Row")({
  id: ChatId,
  at: Schema.DateTimeUtc,
  note: Schema.optional(Schema.String),
  maybe: Schema.NullOr(Schema.DateTimeUtc),
  later: Schema.optional(Schema.DateTimeUtc)
}) {}

interface Tree {
  readonly label: string
  readonly at: DateTime.Utc
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Schema<
  Tree,
  { readonly label: string; readonly at: string; readonly children: ReadonlyArray<any> }
> = Schema.Struct({
  label: Schema.String,
  at: Schema.DateTimeUtc,
  children: Schema.Array(Schema.suspend(() => Tree))
})

/** A row as the driver gives it: dates as `Date`s, NULL for an absent value. */
const StoredRow = Schema.Struct({
  id: ChatId,
  status: Schema.Literal("running", "completed"),
  created_at: Schema.DateTimeUtcFromDate,
  deleted_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
  tags: Schema.Array(Schema.String)
})

describe("TrustedSchema.encoder", () => {
  it("encodes the hot responses as Schema.encode does", () => {
    agreesWithSchema(Chat.ListChatsResponse)
    agreesWithSchema(Chat.GetChatResponse, 60)
    agreesWithSchema(Chat.ChatCellsResponse, 60)
    agreesWithSchema(Playbook.GetPlaybookResponse, 60)
    agreesWithSchema(Playbook.ListPlaybooksResponse, 60)
  })

  it("encodes a union told apart by a literal property (a chat event by its type) member by member", () => {
    agreesWithSchema(ChatEvent.ChatEvent)
    agreesWithSchema(Schema.Array(ChatEvent.ChatEvent), 60)
    // Told apart by `kind`, although both members also share `at`.
    agreesWithSchema(Schema.Union(
      Schema.Struct({ kind: Schema.Literal("a", "b"), at: Schema.DateTimeUtc }),
      Schema.Struct({ kind: Schema.Literal("c"), at: Schema.DateTimeUtc, n: Schema.NumberFromString })
    ))
  })

  it("applies transformations through classes, optional and nullable fields, unions, arrays and recursion", () => {
    agreesWithSchema(Row)
    agreesWithSchema(Schema.Array(Row))
    agreesWithSchema(Tree, 50)
    agreesWithSchema(
      Schema.Struct({ n: Schema.NumberFromString, both: Schema.Union(Schema.Literal("a", "b"), Schema.Number) })
    )
    agreesWithSchema(Schema.Union(Row, Schema.Struct({ kind: Schema.Literal("other"), at: Schema.DateTimeUtc })))
  })

  it("applies property transformations: a nullable column, a renamed key", () => {
    const Nullable = Schema.Struct({
      a: Schema.optionalWith(Schema.DateTimeUtc, { nullable: true }),
      b: Schema.propertySignature(Schema.DateTimeUtc).pipe(Schema.fromKey("c")),
      d: Schema.String
    })
    agreesWithSchema(Nullable)
    decodesAsSchema(Nullable)
    expect(TrustedSchema.decoder(Nullable)({ a: null, c: "1970-01-01T00:00:00.000Z", d: "x" })).toStrictEqual(
      Schema.decodeUnknownSync(Nullable)({ a: null, c: "1970-01-01T00:00:00.000Z", d: "x" })
    )
  })

  it("hands what it does not apply itself to Schema: options, records, tuples", () => {
    agreesWithSchema(Schema.Struct({ o: Schema.OptionFromNullOr(Schema.DateTimeUtc) }))
    agreesWithSchema(Schema.Record({ key: Schema.String, value: Schema.DateTimeUtc }))
    agreesWithSchema(Schema.Tuple(Schema.String, Schema.DateTimeUtc))
  })

  it("keeps only the declared fields, in the schema's order", () => {
    const Summary = Schema.Struct({ b: Schema.String, a: Schema.DateTimeUtc })
    const value = { a: DateTime.unsafeMake(0), extra: "dropped", b: "x" }
    expect(JSON.stringify(TrustedSchema.encoder(Summary)(value))).toBe(
      JSON.stringify({ b: "x", a: "1970-01-01T00:00:00.000Z" })
    )
  })

  it("does not check again what the service made: a brand is not re-validated", () => {
    // Not a UUID: the checked encoder refuses it, the trusted one only transforms.
    const value = { id: "not-a-uuid" as ChatId, at: DateTime.unsafeMake(0), maybe: null }
    expect(() => Schema.encodeSync(Row)(new Row(value, true))).toThrow()
    expect(TrustedSchema.encoder(Row)(new Row(value, true))).toEqual({
      id: "not-a-uuid",
      at: "1970-01-01T00:00:00.000Z",
      maybe: null
    })
  })
})

describe("TrustedSchema.decoder", () => {
  it("decodes what the service stored as Schema.decode does: rows, classes, the hot responses", () => {
    decodesAsSchema(StoredRow)
    decodesAsSchema(Schema.Array(StoredRow))
    decodesAsSchema(Row)
    decodesAsSchema(Tree, 50)
    decodesAsSchema(Chat.ListChatsResponse)
    decodesAsSchema(Playbook.GetPlaybookResponse, 60)
    decodesAsSchema(Schema.Array(ChatEvent.ChatEvent), 60)
    decodesAsSchema(Schema.Struct({ o: Schema.OptionFromNullOr(Schema.DateTimeUtc), n: Schema.NumberFromString }))
  })

  it("makes class instances without validating them again", () => {
    const decoded = TrustedSchema.decoder(Row)({ id: "not-a-uuid", at: "1970-01-01T00:00:00.000Z", maybe: null })
    expect(decoded).toBeInstanceOf(Row)
    expect(decoded.id).toBe("not-a-uuid")
    expect(DateTime.toEpochMillis(decoded.at)).toBe(0)
    expect(() => Schema.decodeUnknownSync(Row)({ id: "not-a-uuid", at: "1970-01-01T00:00:00.000Z", maybe: null }))
      .toThrow()
  })
})

describe("TrustedSchema.make", () => {
  it("builds what the class's constructor builds without validation, for any value of its fields", () =>
    FastCheck.assert(
      FastCheck.property(Arbitrary.make(Schema.typeSchema(Chat.ChatSummary)), (value) => {
        const props = { ...value }
        const made = TrustedSchema.make(Chat.ChatSummary, props)
        const constructed = new Chat.ChatSummary(props, true)
        expect(made).toBeInstanceOf(Chat.ChatSummary)
        expect(made).toStrictEqual(constructed)
        expect(Equal.equals(made, constructed)).toBe(true)
        expect(JSON.stringify(made)).toBe(JSON.stringify(constructed))
        // A copy: the props stay the caller's.
        expect(made).not.toBe(props)
      }),
      { numRuns: 100 }
    ))

  it("leaves a class with a constructor default to its constructor, which applies the default", () => {
    class WithDefault extends Schema.Class<WithDefault>("WithDefault")({
      name: Schema.String,
      count: Schema.optionalWith(Schema.Number, { default: () => 7 })
    }) {}
    const made = TrustedSchema.make(WithDefault, { name: "a" })
    expect(made).toBeInstanceOf(WithDefault)
    expect(made.count).toBe(7)
  })
})

describe("TrustedSchema dates", () => {
  const encodeUtc = TrustedSchema.encoder(Schema.DateTimeUtc)
  const decodeFromDate = TrustedSchema.decoder(Schema.DateTimeUtcFromDate)

  it("writes a DateTime's ISO text as toISOString does, in and out of the range it computes itself", () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      951_782_400_000,
      951_868_799_999,
      4_107_542_400_000,
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -62_167_219_200_000,
      8.64e15,
      -8.64e15
    ]
    for (const millis of edges) {
      expect(encodeUtc(DateTime.unsafeMake(millis))).toBe(new Date(millis).toISOString())
    }
    FastCheck.assert(
      FastCheck.property(FastCheck.integer({ min: -8.64e15, max: 8.64e15 }), (millis) => {
        expect(encodeUtc(DateTime.unsafeMake(millis))).toBe(new Date(millis).toISOString())
      }),
      { numRuns: 5000 }
    )
    FastCheck.assert(
      FastCheck.property(FastCheck.integer({ min: 0, max: 253_402_300_799_999 }), (millis) => {
        expect(encodeUtc(DateTime.unsafeMake(millis))).toBe(new Date(millis).toISOString())
      }),
      { numRuns: 20_000 }
    )
  })

  it("reads a column's Date as the schema does, and refuses an invalid one as it does", () => {
    const date = new Date("2026-11-25T06:52:03.938Z")
    expect(decodeFromDate(date)).toStrictEqual(Schema.decodeUnknownSync(Schema.DateTimeUtcFromDate)(date))
    expect(() => decodeFromDate(new Date(Number.NaN))).toThrow()
  })
})

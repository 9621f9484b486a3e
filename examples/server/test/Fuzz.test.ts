/**
 * A schema-derived fuzz test of the whole /v2 contract over the socket. For every operation of the
 * `HttpApi` it sends inputs derived from the operation's own schemas (well-shaped values from
 * `Arbitrary`, then ill-typed JSON and edge-case text) in the path, the query and the body, with a
 * valid admin key. Whatever comes in: never a 5xx, every error in the envelope, every message short.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { SightlineApi } from "@sightline/http/Api"
import * as Arbitrary from "effect/Arbitrary"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import { expect, it } from "vitest"
import { describeServers } from "./utils/server.js"

interface Operation {
  readonly method: string
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly query: Option.Option<Schema.Schema.AnyNoContext>
  readonly body: Option.Option<AST.AST>
  readonly multipart: boolean
}

const operations: Array<Operation> = []
HttpApi.reflect(SightlineApi, {
  onGroup: () => undefined,
  onEndpoint: ({ endpoint, payloads }) => {
    const json = payloads.get("application/json")
    operations.push({
      method: endpoint.method,
      path: endpoint.path,
      pathParams: endpoint.path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1)),
      query: endpoint.urlParamsSchema as unknown as Option.Option<Schema.Schema.AnyNoContext>,
      body: json === undefined ? Option.none() : Option.some(json.ast),
      multipart: payloads.has("multipart/form-data")
    })
  }
})

const edgeText = [
  "",
  " ",
  "0",
  "-1",
  "2147483648",
  "9007199254740993",
  "1e309",
  "NaN",
  "null",
  "true",
  "../../etc/passwd",
  "%00",
  "a\u0000b",
  "\ud800",
  "\udfff tail",
  "é🚀",
  "x".repeat(5000),
  "' OR '1'='1",
  "<script>alert(1)</script>",
  "00000000-0000-0000-0000-000000000000",
  crypto.randomUUID()
]

const seed = 20261123
const sample = <A>(arbitrary: FastCheck.Arbitrary<A>, n: number): Array<A> =>
  FastCheck.sample(arbitrary, { numRuns: n, seed })

// Well-shaped values of a schema's encoded side, when fast-check can build them.
const shaped = (schema: Schema.Schema.AnyNoContext, n: number): Array<unknown> => {
  try {
    return sample(Arbitrary.make(Schema.encodedSchema(schema)), n)
  } catch {
    return []
  }
}

const illTyped = (n: number): Array<unknown> => [
  ...sample(FastCheck.jsonValue({ maxDepth: 3 }), n),
  ...edgeText.map((text) => ({ name: text, question: text, prompt: text, title: text })),
  [],
  "string",
  42,
  null
]

// The same shape with every string replaced by `text`: valid structure, hostile content.
const withStrings = (value: unknown, text: string): unknown =>
  typeof value === "string"
    ? text
    : Array.isArray(value)
    ? value.map((item) => withStrings(item, text))
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withStrings(inner, text)]))
    : value

const bodies = (operation: Operation): Array<string> => {
  const values = Option.match(operation.body, {
    onNone: () => [],
    onSome: (ast) => shaped(Schema.make(ast) as Schema.Schema.AnyNoContext, 6)
  })
  const hostile = values.slice(0, 2).flatMap((value) => edgeText.map((text) => withStrings(value, text)))
  return [...values, ...hostile, ...illTyped(6)].map((value) => JSON.stringify(value))
}

const queries = (operation: Operation): Array<string> => {
  const values = Option.match(operation.query, { onNone: () => [], onSome: (schema) => shaped(schema, 4) })
  const fromSchema = values.flatMap((value) =>
    typeof value === "object" && value !== null
      ? [
        new URLSearchParams(
          Object.entries(value).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))
        )
          .toString()
      ]
      : []
  )
  const names = Option.match(operation.query, {
    onNone: () => ["limit"],
    onSome: (schema) =>
      Schema.encodedSchema(schema).ast._tag === "TypeLiteral"
        ? (Schema.encodedSchema(schema).ast as AST.TypeLiteral).propertySignatures.map((p) => String(p.name))
        : ["limit"]
  })
  const edges = names.flatMap((name) => edgeText.map((text) => `${encode(name)}=${encode(text)}`))
  return ["", ...fromSchema, ...edges]
}

// A lone surrogate cannot be percent-encoded as UTF-8: send the bytes of one (ED A0 80) as they are.
const encode = (text: string): string => {
  try {
    return encodeURIComponent(text)
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ""))}%ED%A0%80`
  }
}

const pathFor = (operation: Operation, value: string): string =>
  operation.pathParams.reduce((path, name) => path.replace(`:${name}`, encode(value)), operation.path)

// On PostgreSQL alone, the deployment's store: the inputs are refused by the schemas before any
// statement, and what reaches a repository reaches the same SQL on PGlite, whose repositories the
// contract suites run; the second store doubled two minutes of requests.
describeServers(
  "schema-derived fuzzing of every /v2 operation",
  (server) => {
    it("never answers 5xx; every error is the envelope with a short message", { timeout: 300_000 }, async () => {
      const org = await server().newOrg()
      const failures: Array<string> = []
      let sent = 0
      const send = async (operation: Operation, path: string, body: string | undefined) => {
        sent++
        const response = await server().request(path, {
          method: operation.method,
          key: org.key,
          ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body })
        })
        const text = await response.text()
        const where = `${operation.method} ${path.slice(0, 120)} ${body === undefined ? "" : body.slice(0, 120)}`
        if (response.status >= 500) failures.push(`${response.status} ${where}: ${text.slice(0, 200)}`)
        if (response.status >= 400) {
          let envelope: any
          try {
            envelope = JSON.parse(text)
          } catch {
            failures.push(`no JSON envelope: ${response.status} ${where}: ${text.slice(0, 200)}`)
            return
          }
          if (typeof envelope?.error?.code !== "string" || typeof envelope?.error?.message !== "string") {
            failures.push(`not the envelope: ${response.status} ${where}: ${text.slice(0, 200)}`)
          } else if (envelope.error.message.length >= 1024) {
            failures.push(`message of ${envelope.error.message.length} characters: ${where}`)
          } else if (/Brand<|\{ readonly|ReadonlyArray<|Expected undefined/.test(envelope.error.message)) {
            failures.push(`a schema rendering in the message: ${where}: ${envelope.error.message.slice(0, 200)}`)
          }
        }
      }
      for (const operation of operations) {
        // Runs are long-lived and asked for separately (the agent's tests); here, only their input checks.
        const pathValues = operation.pathParams.length === 0 ? [""] : edgeText
        for (const value of pathValues) await send(operation, pathFor(operation, value), undefined)
        const path = pathFor(operation, crypto.randomUUID())
        for (const query of queries(operation)) {
          await send(operation, query === "" ? path : `${path}?${query}`, undefined)
        }
        if (["POST", "PUT", "PATCH"].includes(operation.method)) {
          for (const body of bodies(operation)) await send(operation, path, body)
        }
      }
      expect(failures).toEqual([])
      expect(sent).toBeGreaterThan(1000)
    })
  },
  { rateLimitPerMinute: 1_000_000 },
  ["postgres"]
)

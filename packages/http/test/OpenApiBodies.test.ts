/**
 * The OpenAPI document's request bodies agree with the server: for every operation with a JSON
 * body, what the declared JSON Schema accepts is what the server's payload schema decodes, and what
 * one refuses the other refuses. The declared schema is derived from the payload schema, but not
 * every rule survives the derivation (a filter without a `jsonSchema` annotation vanishes, a body
 * that is not `strict` accepts what it declares it refuses), so the two are compared on bodies
 * made from the schema itself: valid ones from its `Arbitrary`, and each of them broken one way at
 * a time (a property missing, one too many, a value of another JSON type, an empty string).
 *
 * Semantic rules that JSON Schema cannot state (a cron expression, a safe relative path, a Python
 * identifier beyond its pattern) are out of reach of these mutations: a value of the right type
 * that breaks such a rule is never generated, so the test asks only what a schema can declare.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SightlineApi } from "../src/Api.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

interface Candidate {
  readonly label: string
  readonly body: Json
}

/** Values of each JSON type: a property set to one of another type than its own is broken. */
const ofEveryType: ReadonlyArray<Json> = [null, 7, true, [], {}]

const jsonType = (value: Json) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

const isObject = (value: Json): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Valid bodies, then each broken in one place. */
const candidatesOf = (valid: ReadonlyArray<Json>): ReadonlyArray<Candidate> => {
  const out: Array<Candidate> = [
    { label: "an empty object", body: {} },
    { label: "an array", body: [] },
    { label: "null", body: null },
    ...valid.map((body) => ({ label: "a valid body", body }))
  ]
  for (const body of valid.slice(0, 4)) {
    if (!isObject(body)) continue
    out.push({ label: "an unknown property", body: { ...body, unexpected: 1 } })
    for (const key of Object.keys(body)) {
      const { [key]: _removed, ...rest } = body
      out.push({ label: `without ${key}`, body: rest })
      for (const value of ofEveryType) {
        if (jsonType(value) === jsonType(body[key]!)) continue
        out.push({ label: `${key} as ${jsonType(value)}`, body: { ...body, [key]: value } })
      }
      if (typeof body[key] === "string") out.push({ label: `${key} empty`, body: { ...body, [key]: "" } })
    }
  }
  return out
}

/** The operations with a JSON body: their payload schema, and the body their OpenAPI entry declares. */
const operations = () => {
  const document = OpenApi.fromApi(SightlineApi) as unknown as {
    readonly paths: Record<string, Record<string, { readonly requestBody?: any }>>
    readonly components: unknown
  }
  const found: Array<{
    readonly name: string
    readonly schema: Schema.Schema<unknown, Json>
    readonly json: Schema.Schema<unknown, Json>
    readonly declared: unknown
  }> = []
  HttpApi.reflect(SightlineApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, payloads }) => {
      const payload = payloads.get("application/json")
      if (payload === undefined) return
      const path = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const name = `${endpoint.method} ${path}`
      found.push({
        name,
        // What the server decodes with: the endpoint's own schema (reflection splits a union by
        // encoding, and loses what annotates the union, such as `strict`).
        schema: Option.getOrThrow(endpoint.payloadSchema) as unknown as Schema.Schema<unknown, Json>,
        // What valid bodies are made from: the JSON member alone (a multipart member's files have
        // no JSON to make).
        json: Schema.make(payload.ast) as unknown as Schema.Schema<unknown, Json>,
        declared: document.paths[path]?.[endpoint.method.toLowerCase()]?.requestBody?.content?.["application/json"]
          ?.schema
      })
    }
  })
  // The declared bodies refer to the document's components: ajv resolves them under the id `doc`.
  const ajv = new Ajv2020({ strict: false, validateFormats: false })
  const rebased = (schema: unknown) =>
    JSON.parse(JSON.stringify(schema).replaceAll("\"#/components/", "\"doc#/components/"))
  ajv.addSchema(rebased({ components: document.components }), "doc")
  return found.map((operation) => ({
    ...operation,
    validate: operation.declared === undefined ? undefined : ajv.compile(rebased(operation.declared))
  }))
}

describe("the OpenAPI document's request bodies", () => {
  const all = operations()

  it("cover every operation with a JSON body", () => {
    expect(all.length).toBeGreaterThan(30)
    expect(all.filter((operation) => operation.validate === undefined).map((operation) => operation.name)).toEqual([])
  })

  it("accept exactly what the server accepts", () => {
    const disagreements: Array<string> = []
    for (const { json, name, schema, validate } of all) {
      const encode = Schema.encodeSync(json)
      const valid = FastCheck.sample(Arbitrary.make(json), { numRuns: 12, seed: 51 }).map((value) => encode(value))
      const decode = Schema.decodeUnknownEither(schema)
      const seen = new Set<string>()
      for (const { body, label } of candidatesOf(valid)) {
        const server = Either.isRight(decode(body))
        const declared = validate!(body) as boolean
        if (server === declared || seen.has(label)) continue
        seen.add(label)
        disagreements.push(
          `${name}: ${label}: the server ${server ? "accepts" : "refuses"} it, the document ${
            declared ? "accepts" : "refuses"
          } it: ${JSON.stringify(body).slice(0, 160)}`
        )
      }
    }
    expect(disagreements).toEqual([])
  })
})

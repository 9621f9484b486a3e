/** Decode failures answer in words a person reads, over the socket and in the formatter itself. */
import { describe, expect, it } from "@effect/vitest"
import * as Issues from "../src/internal/issues.js"
import { body, describeServer } from "./utils/server.js"

describeServer("decode failures in plain words", (server) => {
  const message = async (method: string, path: string, json?: unknown) => {
    const org = await server().newOrg()
    const response = await server().request(path, { method, key: org.key, ...(json === undefined ? {} : { json }) })
    expect(response.status).toBe(400)
    const { error } = await body(response)
    expect(error.code).toBe("invalid_request")
    // Never Effect's renderings of types, nor the optional member's noise.
    expect(error.message).not.toMatch(/Brand<|\{ readonly|ReadonlyArray<|Expected undefined/)
    return error.message as string
  }

  it("names the field and what it should be", async () => {
    expect(await message("POST", "/v2/api-keys", 5)).toBe("Invalid request: Expected a JSON object, actual 5")
    expect(await message("POST", "/v2/api-keys", { assumedRoles: ["x"] })).toBe(
      "Invalid request: assumedRoles.0: Expected a Universally Unique Identifier, actual \"x\""
    )
    expect(await message("GET", "/v2/chats?sort_by=zzz")).toBe(
      "Invalid request: sort_by: Expected one of \"name\", \"created_at\", \"updated_at\", actual \"zzz\""
    )
    expect(await message("GET", "/v2/playbooks?limit=abc")).toBe(
      "Invalid request: limit: Unable to decode \"abc\" into a number"
    )
    expect(await message("POST", "/v2/chats", { question: 1 })).toBe(
      "Invalid request: question: Expected string, actual 1"
    )
  })
})

describe("Issues.describe", () => {
  it("drops brands, merges literal unions, and keeps five short lines", () => {
    expect(Issues.describe("Invalid request", [
      { path: ["id"], message: "Expected string & Brand<\"AppId\">, actual 5" },
      { path: ["kind"], message: "Expected \"a\", actual \"z\"" },
      { path: ["kind"], message: "Expected \"b\", actual \"z\"" },
      { path: ["kind"], message: "Expected undefined, actual \"z\"" }
    ], "")).toBe("Invalid request: id: Expected string, actual 5; kind: Expected one of \"a\", \"b\", actual \"z\"")
    const many = Array.from({ length: 8 }, (_, i) => ({ path: [`f${i}`], message: `is missing ${"x".repeat(400)}` }))
    const text = Issues.describe("Invalid request", many, "")
    expect(text).toMatch(/\(and 3 more\)$/)
    expect(text.length).toBeLessThan(1024)
  })
})

/**
 * Seeding connectors' configs, chats and library changes for the server tests, through core's use
 * cases on the server's own store (the agent that writes chats arrives later).
 */
import * as Asset from "@sightline/core/Asset"
import * as AssetStore from "@sightline/core/AssetStore"
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import * as ChatRuns from "@sightline/core/ChatRuns"
import type * as Connector from "@sightline/core/Connector"
import * as ConnectorRepo from "@sightline/core/ConnectorRepo"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import { AssetId, CellId, ConnectorId, OrganizationId } from "@sightline/core/Ids"
import * as Library from "@sightline/core/Library"
import { Fixtures } from "@sightline/core/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Org, TestServer } from "./server.js"

/** A POSTGRES connector config whose password the tests look for in every response. */
export const postgresConfig = (name: string, password = "s3cret-pw") => ({
  connector_type: "POSTGRES",
  name,
  postgres: { host: "db.internal", user: "analyst", password, database: "sales" }
})

/** The stored bytes of the seeded chart (a PNG signature and a few bytes that are not UTF-8). */
export const chartBytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe])

/**
 * A finished chat of the organization's admin: a question, a SQL cell that produced a stored chart
 * (bytes in a blob store) and an inline CSV, and the answer.
 */
export const seedChat = (server: TestServer, org: Org, question: string) =>
  server.run(Effect.gen(function*() {
    const principal = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const runs = yield* ChatRuns.ChatRuns
    const { run } = yield* runs.start(principal, { question })
    const cellId = CellId.make(crypto.randomUUID())
    yield* runs.appendCell(run, {
      id: cellId,
      type: "sql",
      status: "completed",
      created_at: yield* DateTime.now,
      query: "SELECT 1",
      output: ["1"]
    })
    const chartId = AssetId.make(crypto.randomUUID())
    const storageKey = Asset.storageKey({ organization_id: run.organizationId, chat_id: run.chatId, id: chartId })
    yield* (yield* AssetStore.AssetStore).put(storageKey, { bytes: chartBytes, mimeType: "image/png" })
    yield* runs.addAsset(run, {
      id: chartId,
      cell_id: cellId,
      name: "chart.png",
      type: "chart",
      mime_type: "image/png",
      storage_key: storageKey
    })
    const tableId = AssetId.make(crypto.randomUUID())
    yield* runs.addAsset(run, {
      id: tableId,
      cell_id: cellId,
      name: "by region.csv",
      type: "table",
      mime_type: "text/csv",
      content: "region,amount\nEU,10\n"
    })
    yield* runs.complete(run, `The answer to ${question}`, [])
    return {
      chatId: run.chatId as string,
      cellId: cellId as string,
      chartId: chartId as string,
      tableId: tableId as string
    }
  }))

/** An open library change by the admin, on top of a seeded (merged) library. */
export const seedChange = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const changes = yield* Changes.Changes
    const body = (title: string) =>
      Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title, description: `${title}.` })
    const seed = yield* changes.create(admin, {
      body: body("Seed"),
      baseRef: Option.none(),
      edits: Fixtures.edits({ "sql/revenue.sql": "SELECT 1\n" })
    })
    yield* changes.approve(admin, seed.change_id, { expected_git_ref: seed.git_ref })
    const head = yield* changes.get(admin, seed.change_id, {})
    const open = yield* changes.create(admin, {
      body: body("Revenue by region"),
      baseRef: Option.some(head.git_ref),
      edits: Fixtures.edits({ "sql/revenue.sql": "SELECT region, sum(amount) FROM sales GROUP BY 1\n" })
    })
    return { id: open.change_id as string, gitRef: open.git_ref, status: open.status }
  }))

/**
 * Requests every `[method, path, json?]` with `key` (none when undefined) and returns
 * `[method, path, status, error code]` for each, to compare whole tables of expected errors at once.
 */
export const statuses = (
  server: TestServer,
  key: string | undefined,
  calls: ReadonlyArray<readonly [string, string, unknown?]>
) =>
  Promise.all(calls.map(async ([method, path, json]) => {
    const response = await server.request(path, {
      method,
      ...(key === undefined ? {} : { key }),
      ...(json === undefined ? {} : { json })
    })
    const text = await response.text()
    let code: unknown
    try {
      code = JSON.parse(text)?.error?.code
    } catch {
      code = undefined
    }
    return [method, path, response.status, code] as const
  }))

/** Runs SQL written by hand on the organization's connector, through the server's own runtime. */
export const handSql = (server: TestServer, org: Org, connectorId: number, sql: string) =>
  server.run(Effect.gen(function*() {
    const repo = yield* ConnectorRepo.ConnectorRepo
    const record = Option.getOrThrow(
      yield* repo.get(OrganizationId.make(org.organizationId), ConnectorId.make(connectorId))
    )
    return yield* (yield* ConnectorRuntime).query(record as Connector.ConnectorRecord, {
      sql,
      clientAttributesJson: "{}",
      maxRows: 1000,
      timeoutMillis: 30_000
    })
  }))

/** A DEMO connector of the organization (the generated retail dataset); its id. */
export const demoConnector = async (server: TestServer, org: Org): Promise<number> => {
  const created = await server.request("/v2/connectors", {
    method: "POST",
    key: org.key,
    json: { config: { connector_type: "DEMO", name: "Demo retail", demo: {} } }
  })
  if (created.status !== 201) throw new Error(`creating a DEMO connector answered ${created.status}`)
  return JSON.parse(await created.text()).id
}

/** Files and merges an edit of the library's DEMO model, as the organization's admin. */
export const editModel = (server: TestServer, org: Org, edit: (yaml: string) => string) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const changes = yield* Changes.Changes
    const main = yield* (yield* Library.Library).main(admin.organizationId)
    const text = new TextDecoder().decode(HashMap.unsafeGet(main.files, "semantic/demo.yaml"))
    const filed = yield* changes.create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Model", description: "An edit." }),
      baseRef: main.head,
      edits: Fixtures.edits({ "semantic/demo.yaml": edit(text) })
    })
    return yield* changes.approve(admin, filed.change_id, { expected_git_ref: filed.git_ref })
  }))

/** Files and merges library files as the organization's admin. */
export const mergeFiles = (server: TestServer, org: Org, files: Record<string, string>) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const changes = yield* Changes.Changes
    const main = yield* (yield* Library.Library).main(admin.organizationId)
    const filed = yield* changes.create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Library files", description: "An edit." }),
      baseRef: main.head,
      edits: Fixtures.edits(files)
    })
    const approved = yield* changes.approve(admin, filed.change_id, { expected_git_ref: filed.git_ref })
    if (!approved.merged) return yield* Effect.dieMessage(`not merged: ${JSON.stringify(filed.checks)}`)
  }))

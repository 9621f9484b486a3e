import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import type { OrganizationId } from "@sightline/core/Ids"
import { encodeText } from "@sightline/core/LibraryDiff"
import { LibraryStore } from "@sightline/core/LibraryStore"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { blobKey } from "../src/LibraryStoreSql.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase, postgresUrl, type StoreServices, type TestDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const files = (entries: Record<string, string | Uint8Array>) =>
  HashMap.fromIterable(
    Object.entries(entries).map(([path, content]) =>
      [path, typeof content === "string" ? encodeText(content) : content] as const
    )
  )

const setup = Effect.gen(function*() {
  const store = yield* LibraryStore
  const org = yield* Fixtures.organization()
  const author = yield* Fixtures.member(org.id)
  const commit = (entries: Record<string, string | Uint8Array>, parent?: string, message = "test") =>
    store.commit(org.id, {
      ...(parent === undefined ? {} : { parent }),
      message,
      author: author.id,
      files: files(entries)
    })
  return { store, org, author, commit }
})

/** Rows of one of the store's tables that belong to an organization. */
const countRows = (table: string, organizationId: OrganizationId, where?: { column: string; value: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix.TablePrefix
    const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(prefix.name(table))}
      WHERE organization_id = ${organizationId}${
      where === undefined ? sql`` : sql` AND ${sql(where.column)} = ${where.value}`
    }`
    return row!.n
  })

/** The shared store, and on PostgreSQL a second store over its own pool: a second server process. */
const twoProcesses = (database: TestDatabase) =>
  Effect.gen(function*() {
    const first = yield* Effect.context<StoreServices>()
    if (database.name !== "postgres") return [first, first] as const
    const prefix = (yield* TablePrefix.TablePrefix).prefix
    const second = yield* Layer.build(
      SqlStore.layer.pipe(
        Layer.provideMerge(TablePrefix.layer(prefix)),
        Layer.provideMerge(PostgresClient.layer({ url: postgresUrl, maxConnections: 5 }))
      )
    )
    return [first, second as Context.Context<StoreServices>] as const
  })

forEachDatabase((database) =>
  describe(`LibraryStoreSql (${database.name})`, () => {
    it.effect("blobs are deduplicated: the same content is stored once per organization", () =>
      Effect.gen(function*() {
        const { commit, org } = yield* setup
        const shared = "the same content\n"
        const first = yield* commit({ "a.md": shared, "copy/a.md": shared, "b.md": "b" })
        yield* commit({ "a.md": shared, "c.md": shared }, first)
        const key = blobKey(encodeText(shared))
        expect(key).toMatch(/^[0-9a-f]{64}$/)
        expect(yield* countRows("library_blobs", org.id, { column: "sha256", value: key })).toBe(1)
        expect(yield* countRows("library_blobs", org.id)).toBe(2)
        // The same content in another organization is that organization's own blob.
        const other = yield* setup
        yield* other.commit({ "a.md": shared })
        expect(yield* countRows("library_blobs", other.org.id, { column: "sha256", value: key })).toBe(1)
      }).pipe(Effect.provide(database.shared)))

    it.effect("refs are 40 hex digits; the same commit stored twice is one commit", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        // `it.effect` runs on the TestClock: both commits have the same time, hence the same content.
        const a = yield* commit({ "a.md": "a" })
        const b = yield* commit({ "a.md": "a" })
        expect(a).toMatch(/^[0-9a-f]{40}$/)
        expect(b).toBe(a)
        expect(yield* countRows("library_commits", org.id)).toBe(1)
        expect(yield* countRows("library_commit_files", org.id)).toBe(1)
        expect(yield* commit({ "a.md": "a" }, undefined, "another message")).not.toBe(a)
        expect(Option.isSome(yield* store.read(org.id, a))).toBe(true)
      }).pipe(Effect.provide(database.shared)))

    it.effect("a commit in a transaction that fails leaves no commit, tree or blob behind", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        let ref = ""
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          ref = yield* commit({ "a.md": "never stored", "b.bin": new Uint8Array([0, 1, 2]) })
          return yield* Effect.fail("crash" as const)
        })))
        expect(exit).toEqual(Exit.fail("crash"))
        expect(yield* store.read(org.id, ref)).toEqual(Option.none())
        for (const table of ["library_blobs", "library_commits", "library_commit_files"]) {
          expect(yield* countRows(table, org.id), table).toBe(0)
        }
      }).pipe(Effect.provide(database.shared)))

    it.effect("a library larger than one statement's worth of rows round-trips, and edits keep its blobs", () =>
      Effect.gen(function*() {
        const { author, commit, org, store } = yield* setup
        const entries = Object.fromEntries(Arr.makeBy(2500, (i) => [`dir${i % 7}/file-${i}.md`, `content ${i}\n`]))
        const first = yield* commit(entries)
        const snapshot = Option.getOrThrow(yield* store.read(org.id, first))
        expect(HashMap.size(snapshot.files)).toBe(2500)
        expect(HashMap.unsafeGet(snapshot.files, "dir4/file-1999.md")).toEqual(encodeText("content 1999\n"))
        const second = yield* store.commit(org.id, {
          parent: first,
          message: "one edit",
          author: author.id,
          changes: HashMap.make(["dir0/file-0.md", Option.some(encodeText("edited\n"))])
        })
        expect(yield* countRows("library_blobs", org.id)).toBe(2501)
        const diff = yield* store.diff(org.id, Option.some(first), second)
        expect(diff.diffs.map((d) => d.new_path)).toEqual(["dir0/file-0.md"])
      }).pipe(Effect.provide(database.shared)))

    it.effect("reads of commits, trees, blobs and heads are index scans", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const prefix = (yield* TablePrefix.TablePrefix).prefix
        const ref = yield* commit({ "a.md": "a", "b.md": "b" })
        yield* store.setHead(org.id, Option.none(), ref)
        const { plans } = yield* sql.withTransaction(Effect.gen(function*() {
          // The tables of a test database are small: without this, a sequential scan would win.
          yield* sql`SET LOCAL enable_seqscan = off`
          return yield* capturePlans(Effect.zip(store.read(org.id, ref), store.head(org.id)))
        }))
        const indexes = ["library_commits_pkey", "library_commit_files_pkey", "library_blobs_pkey", "library_refs_pkey"]
        expect(plans).toHaveLength(indexes.length)
        plans.forEach(({ plan }, i) => {
          expect(plan, plan).toMatch(new RegExp(`Index (Only )?Scan using ${prefix}${indexes[i]}\\b`))
          expect(plan, plan).not.toMatch(/Seq Scan/)
        })
      }).pipe(Effect.provide(database.shared)))

    it.live("concurrent transactions committing overlapping blobs all succeed and store each blob once", () =>
      Effect.gen(function*() {
        const { author, org } = yield* setup
        const processes = yield* twoProcesses(database)
        const shared = Arr.makeBy(30, (i) => `shared ${i}\n`)
        // Every writer holds the shared contents in its own order, plus one content of its own.
        const write = (w: number) =>
          withTransaction(Effect.flatMap(LibraryStore, (store) =>
            store.commit(org.id, {
              message: `writer ${w}`,
              author: author.id,
              files: files(Object.fromEntries([
                ...shared.map((content, i) => [`f${(i * (w + 7)) % 31}-${i}.md`, content] as const),
                [`own-${w}.md`, `own ${w}\n`] as const
              ]))
            }))).pipe(Effect.provide(processes[w % 2]!))
        const refs = yield* Effect.all(Arr.makeBy(8, write), { concurrency: "unbounded" })
        expect(new Set(refs).size).toBe(8)
        expect(yield* countRows("library_blobs", org.id)).toBe(30 + 8)
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.live("setHead: of N concurrent compare-and-sets from the same head, exactly one wins", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const processes = yield* twoProcesses(database)
        const race = (expected: Option.Option<string>, candidates: ReadonlyArray<string>) =>
          Effect.all(
            candidates.map((next, i) =>
              Effect.flatMap(LibraryStore, (s) => Effect.exit(s.setHead(org.id, expected, next))).pipe(
                Effect.provide(processes[i % 2]!)
              )
            ),
            { concurrency: "unbounded" }
          )
        const firsts = yield* Effect.forEach(Arr.range(1, 12), (i) => commit({ "a.md": `first ${i}` }))
        const fromNothing = yield* race(Option.none(), firsts)
        expect(fromNothing.filter(Exit.isSuccess)).toHaveLength(1)
        const winner = firsts[fromNothing.findIndex(Exit.isSuccess)]!
        expect(yield* store.head(org.id)).toEqual(Option.some(winner))
        for (const exit of fromNothing.filter(Exit.isFailure)) {
          expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("Conflict")
        }

        const nexts = yield* Effect.forEach(Arr.range(1, 12), (i) => commit({ "a.md": `next ${i}` }, winner))
        const fromWinner = yield* race(Option.some(winner), nexts)
        expect(fromWinner.filter(Exit.isSuccess)).toHaveLength(1)
        expect(yield* store.head(org.id)).toEqual(Option.some(nexts[fromWinner.findIndex(Exit.isSuccess)]!))
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.effect("deleting an organization removes its whole library", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const first = yield* commit({ "a.md": "a" })
        const second = yield* commit({ "a.md": "b", "c.md": "c" }, first)
        yield* store.setHead(org.id, Option.none(), second)
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix.TablePrefix
        yield* sql`DELETE FROM ${sql(prefix.name("organizations"))} WHERE id = ${org.id}`
        for (const table of ["library_blobs", "library_commits", "library_commit_files", "library_refs"]) {
          expect(yield* countRows(table, org.id), table).toBe(0)
        }
      }).pipe(Effect.provide(database.shared)))
  })
)

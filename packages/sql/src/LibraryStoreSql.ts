/**
 * Core's `LibraryStore` port over SQL: content-addressed blobs (`<prefix>library_blobs`), commits
 * (`<prefix>library_commits`) with their trees (`<prefix>library_commit_files`), and the `main`
 * head of each organization (`<prefix>library_refs`), moved by compare-and-set.
 *
 * Diffs and merges are core's (`@sightline/core/LibraryDiff`), run on snapshots read from here.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { MemberId, OrganizationId } from "@sightline/core/Ids"
import * as LibraryDiff from "@sightline/core/LibraryDiff"
import { LibraryStore, validatePaths } from "@sightline/core/LibraryStore"
import type { Files, Snapshot } from "@sightline/core/LibraryStore"
import * as Traced from "@sightline/core/Traced"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { TablePrefix } from "./TablePrefix.js"

/** The name of the head that merges move. */
const mainRef = "main"

/**
 * The SHA-256 of some bytes, in lowercase hex: the key of a blob.
 *
 * @since 0.1.0
 * @category utils
 */
export const blobKey = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** A tree: path to blob key. */
type Tree = ReadonlyMap<string, string>

/**
 * The ref of a commit: the hash of everything it holds (organization, parent, message, author, time
 * and tree), 40 hex digits like git's. Storing the same commit twice stores it once.
 */
const commitRef = (commit: {
  readonly organizationId: OrganizationId
  readonly parent: Option.Option<string>
  readonly message: string
  readonly authorId: MemberId
  readonly createdAt: DateTime.Utc
  readonly tree: Tree
}): string =>
  createHash("sha256").update(JSON.stringify([
    "sightline-commit-1",
    commit.organizationId,
    Option.getOrNull(commit.parent),
    commit.message,
    commit.authorId,
    DateTime.formatIso(commit.createdAt),
    [...commit.tree].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  ])).digest("hex").slice(0, 40)

/** Splits `items` into chunks under a row count and, when `weight` is given, a total weight. */
const chunked = <A>(items: ReadonlyArray<A>, maxRows: number, maxWeight = Infinity, weight = (_: A) => 0) => {
  const chunks: Array<Array<A>> = []
  let current: Array<A> = []
  let total = 0
  for (const item of items) {
    if (current.length > 0 && (current.length >= maxRows || total + weight(item) > maxWeight)) {
      chunks.push(current)
      current = []
      total = 0
    }
    current.push(item)
    total += weight(item)
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}

// PostgreSQL takes at most 65535 parameters per statement; big blobs also go a few at a time.
const maxKeysPerStatement = 1000
const maxBlobBytesPerStatement = 16 * 1024 * 1024

const CommitRow = Schema.Struct({
  ref: Schema.String,
  parent_ref: Schema.optionalWith(Schema.String, { nullable: true }),
  message: Schema.String,
  author_id: MemberId,
  created_at: Schema.DateTimeUtcFromDate
})
type CommitRow = typeof CommitRow.Type

const RefKey = Schema.Struct({ organization_id: OrganizationId, ref: Schema.String })

const notFound = (ref: string) => new NotFound({ message: `library commit ${ref} not found` })

/**
 * The library store over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<LibraryStore.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const blobs = sql(prefix.name("library_blobs"))
    const commits = sql(prefix.name("library_commits"))
    const commitFiles = sql(prefix.name("library_commit_files"))
    const refs = sql(prefix.name("library_refs"))

    const findCommit = SqlSchema.findOne({
      Request: RefKey,
      Result: CommitRow,
      execute: ({ organization_id, ref }) =>
        sql`SELECT ref, parent_ref, message, author_id, created_at FROM ${commits}
            WHERE organization_id = ${organization_id} AND ref = ${ref}`
    })
    const findTree = SqlSchema.findAll({
      Request: RefKey,
      Result: Schema.Struct({ path: Schema.String, blob_sha256: Schema.String }),
      execute: ({ organization_id, ref }) =>
        sql`SELECT path, blob_sha256 FROM ${commitFiles}
            WHERE organization_id = ${organization_id} AND commit_ref = ${ref}`
    })
    const findBlobs = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, keys: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ sha256: Schema.String, content: Schema.Uint8ArrayFromSelf }),
      execute: ({ keys, organization_id }) =>
        sql`SELECT sha256, content FROM ${blobs} WHERE organization_id = ${organization_id} AND sha256 IN ${
          sql.in(keys)
        }`
    })
    const findBlobKeys = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, keys: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ sha256: Schema.String }),
      execute: ({ keys, organization_id }) =>
        sql`SELECT sha256 FROM ${blobs} WHERE organization_id = ${organization_id} AND sha256 IN ${sql.in(keys)}`
    })
    const findHead = SqlSchema.findOne({
      Request: OrganizationId,
      Result: Schema.Struct({ commit_ref: Schema.String }),
      execute: (organizationId) =>
        sql`SELECT commit_ref FROM ${refs} WHERE organization_id = ${organizationId} AND name = ${mainRef}`
    })

    /** A commit with its tree, or `NotFound`. */
    const load = (organizationId: OrganizationId, ref: string) =>
      Effect.gen(function*() {
        const commit = yield* Effect.orDie(findCommit({ organization_id: organizationId, ref }))
        if (Option.isNone(commit)) return yield* notFound(ref)
        const entries = yield* Effect.orDie(findTree({ organization_id: organizationId, ref }))
        const tree: Tree = new Map(entries.map((entry) => [entry.path, entry.blob_sha256]))
        return { commit: commit.value, tree }
      })

    const treeOrEmpty = (organizationId: OrganizationId, ref: Option.Option<string>) =>
      Option.match(ref, {
        onNone: () => Effect.succeed<Tree>(new Map()),
        onSome: (r) => Effect.map(load(organizationId, r), ({ tree }) => tree)
      })

    /** The bytes of every blob of `trees`, each read once. */
    const contents = (organizationId: OrganizationId, trees: ReadonlyArray<Tree>) =>
      Effect.gen(function*() {
        const keys = [...new Set(trees.flatMap((tree) => [...tree.values()]))]
        const found = new Map<string, Uint8Array>()
        for (const chunk of chunked(keys, maxKeysPerStatement)) {
          for (const row of yield* Effect.orDie(findBlobs({ organization_id: organizationId, keys: chunk }))) {
            found.set(row.sha256, row.content)
          }
        }
        return found
      })

    /**
     * The files of a tree. Every path gets its own copy of the bytes (the driver's `Buffer` becomes a
     * plain `Uint8Array`), so no caller can change another path's or another read's bytes.
     */
    const filesOf = (tree: Tree, bytes: ReadonlyMap<string, Uint8Array>): Files =>
      HashMap.fromIterable([...tree].map(([path, key]) => [path, new Uint8Array(bytes.get(key)!)] as const))

    /** Stores the blobs the organization lacks. A concurrent writer of the same blob is harmless. */
    const storeBlobs = (organizationId: OrganizationId, newBlobs: ReadonlyMap<string, Uint8Array>) =>
      Effect.gen(function*() {
        const existing = new Set<string>()
        for (const chunk of chunked([...newBlobs.keys()], maxKeysPerStatement)) {
          for (const row of yield* findBlobKeys({ organization_id: organizationId, keys: chunk })) {
            existing.add(row.sha256)
          }
        }
        // In key order: two transactions inserting overlapping blobs then wait on each other in the
        // same order, never in a cycle (a deadlock).
        const missing = [...newBlobs].filter(([key]) => !existing.has(key)).sort(([a], [b]) => (a < b ? -1 : 1))
        const chunks = chunked(missing, maxKeysPerStatement, maxBlobBytesPerStatement, ([, bytes]) => bytes.length)
        for (const chunk of chunks) {
          yield* sql`INSERT INTO ${blobs} ${
            sql.insert(chunk.map(([sha256, content]) => ({ organization_id: organizationId, sha256, content })))
          } ON CONFLICT DO NOTHING`
        }
      })

    const commit: LibraryStore.Service["commit"] = (organizationId, input) =>
      Effect.gen(function*() {
        const parent = Option.fromNullable(input.parent)
        const parentTree = yield* treeOrEmpty(organizationId, parent)
        const newBlobs = new Map<string, Uint8Array>()
        const keyOf = (bytes: Uint8Array) => {
          const key = blobKey(bytes)
          newBlobs.set(key, bytes)
          return key
        }
        const tree = new Map<string, string>()
        if ("files" in input) {
          HashMap.forEach(input.files, (bytes, path) => tree.set(path, keyOf(bytes)))
        } else {
          // Edits to the parent's tree: unchanged files keep their blobs without being read.
          for (const [path, key] of parentTree) tree.set(path, key)
          HashMap.forEach(input.changes, (content, path) =>
            Option.match(content, {
              onNone: () => tree.delete(path),
              onSome: (bytes) => tree.set(path, keyOf(bytes))
            }))
        }
        yield* validatePaths(tree.keys())

        const createdAt = yield* DateTime.now
        const ref = commitRef({
          organizationId,
          parent,
          message: input.message,
          authorId: input.author,
          createdAt,
          tree
        })
        // One transaction (a savepoint inside the caller's): a commit is stored whole or not at all.
        yield* Effect.orDie(sql.withTransaction(Effect.gen(function*() {
          yield* storeBlobs(organizationId, newBlobs)
          const inserted = yield* sql`INSERT INTO ${commits} ${
            sql.insert({
              organization_id: organizationId,
              ref,
              parent_ref: Option.getOrNull(parent),
              message: input.message,
              author_id: input.author,
              created_at: DateTime.toDate(createdAt)
            })
          } ON CONFLICT DO NOTHING RETURNING ref`
          // An identical commit (same content, same millisecond) is already stored, tree included.
          if (inserted.length === 0) return
          for (const chunk of chunked([...tree], maxKeysPerStatement)) {
            yield* sql`INSERT INTO ${commitFiles} ${
              sql.insert(chunk.map(([path, blob_sha256]) => ({
                organization_id: organizationId,
                commit_ref: ref,
                path,
                blob_sha256
              })))
            }`
          }
        })))
        return ref
      }).pipe(Effect.withSpan("LibraryStoreSql.commit"))

    const toSnapshot = (commit: CommitRow, files: Files): Snapshot => ({
      ref: commit.ref,
      parent: Option.fromNullable(commit.parent_ref),
      message: commit.message,
      author_id: commit.author_id,
      created_at: commit.created_at,
      files
    })

    const head = (organizationId: OrganizationId) =>
      Effect.map(Effect.orDie(findHead(organizationId)), Option.map((row) => row.commit_ref))

    return LibraryStore.of({
      commit,
      read: Traced.fn("LibraryStoreSql.read")((organizationId, ref) =>
        load(organizationId, ref).pipe(
          Effect.flatMap(({ commit, tree }) =>
            Effect.map(
              contents(organizationId, [tree]),
              (bytes) => Option.some(toSnapshot(commit, filesOf(tree, bytes)))
            )
          ),
          Effect.catchTag("NotFound", () => Effect.succeedNone)
        )
      ),
      head: Traced.fn("LibraryStoreSql.head")(head),
      setHead: Traced.fn("LibraryStoreSql.setHead")(function*(organizationId, expected, next) {
        if (Option.isNone(yield* Effect.orDie(findCommit({ organization_id: organizationId, ref: next })))) {
          return yield* notFound(next)
        }
        // Compare-and-set in one statement. A concurrent mover holds the row (or the key being
        // inserted) until it commits; this statement then re-checks the condition against the
        // committed head, so of several callers expecting the same head exactly one moves it.
        const moved = yield* Effect.orDie(Option.match(expected, {
          onNone: () =>
            sql`INSERT INTO ${refs} ${sql.insert({ organization_id: organizationId, name: mainRef, commit_ref: next })}
                ON CONFLICT DO NOTHING RETURNING commit_ref`,
          onSome: (current) =>
            sql`UPDATE ${refs} SET commit_ref = ${next}, updated_at = now()
                WHERE organization_id = ${organizationId} AND name = ${mainRef} AND commit_ref = ${current}
                RETURNING commit_ref`
        }))
        if (moved.length === 0) {
          const found = yield* head(organizationId)
          const show = (ref: Option.Option<string>) => Option.getOrElse(ref, () => "no commit")
          return yield* new Conflict({
            message: `the library's main moved: expected ${show(expected)}, found ${show(found)}`
          })
        }
      }),
      diff: Traced.fn("LibraryStoreSql.diff")(function*(organizationId, base, headRef) {
        const before = yield* treeOrEmpty(organizationId, base)
        const after = (yield* load(organizationId, headRef)).tree
        // Files with the same blob on both sides are not in a diff (not even as the source of a
        // rename: they still exist), so only the others are read and diffed.
        const changed = (tree: Tree, other: Tree): Tree =>
          new Map([...tree].filter(([path, key]) => other.get(path) !== key))
        const [b, a] = [changed(before, after), changed(after, before)]
        const bytes = yield* contents(organizationId, [b, a])
        return LibraryDiff.diffFiles(filesOf(b, bytes), filesOf(a, bytes))
      }),
      merge: Traced.fn("LibraryStoreSql.merge")(function*(organizationId, base, ours, theirs) {
        const b = yield* treeOrEmpty(organizationId, base)
        const o = yield* treeOrEmpty(organizationId, ours)
        const t = (yield* load(organizationId, theirs)).tree
        const bytes = yield* contents(organizationId, [b, o, t])
        return LibraryDiff.mergeFiles(filesOf(b, bytes), filesOf(o, bytes), filesOf(t, bytes))
      })
    })
  }
)

/**
 * `LibraryStore` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<LibraryStore, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  LibraryStore,
  make
)

/**
 * The library store port: versioned snapshots of each organization's Context Library.
 *
 * A snapshot maps normalized relative paths to bytes. Commits are immutable and named by a ref
 * string; `main` is a per-organization head moved only by compare-and-set, so two merges racing
 * for main cannot both win. Diffing and merging are pure (`LibraryDiff.ts`) and shared by
 * every implementation.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Equivalence from "effect/Equivalence"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Conflict, InvalidRequest, NotFound } from "./Errors.js"
import type { MemberId, OrganizationId } from "./Ids.js"
import * as LibraryDiff from "./LibraryDiff.js"
import { MemoryState } from "./Transaction.js"

/**
 * The files of a snapshot: path to bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Files = LibraryDiff.Files

/**
 * A diff of two snapshots: per-file entries and the unified `raw_diff`.
 *
 * @since 0.1.0
 * @category models
 */
export type DiffResult = LibraryDiff.DiffResult

/**
 * The outcome of a three-way merge: the merged files, or the conflicts.
 *
 * @since 0.1.0
 * @category models
 */
export type MergeResult = LibraryDiff.MergeResult

/**
 * One conflicting file of a merge.
 *
 * @since 0.1.0
 * @category models
 */
export type FileConflict = LibraryDiff.FileConflict

/**
 * A commit: its files and where it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly ref: string
  readonly parent: Option.Option<string>
  readonly message: string
  readonly author_id: MemberId
  readonly created_at: DateTime.Utc
  readonly files: Files
}

/**
 * A new commit: every file (`files`), or the edits to its parent (`changes`, none deletes).
 *
 * @since 0.1.0
 * @category models
 */
export type CommitInput =
  & {
    /** The commit this one follows; absent for the first commit of a library. */
    readonly parent?: string | undefined
    readonly message: string
    readonly author: MemberId
  }
  & (
    | { readonly files: Files }
    | { readonly changes: HashMap.HashMap<string, Option.Option<Uint8Array>> }
  )

/**
 * Stores library snapshots.
 *
 * @since 0.1.0
 * @category services
 */
export class LibraryStore extends Context.Tag("@sightline/core/LibraryStore")<LibraryStore, LibraryStore.Service>() {}

export declare namespace LibraryStore {
  /** Library storage. A ref of another organization is unknown (`NotFound` / `Option.none()`). */
  export interface Service {
    /**
     * Stores a commit and returns its ref. An invalid path is `InvalidRequest`; an unknown parent
     * is `NotFound`.
     */
    readonly commit: (
      organizationId: OrganizationId,
      input: CommitInput
    ) => Effect.Effect<string, InvalidRequest | NotFound>
    readonly read: (organizationId: OrganizationId, ref: string) => Effect.Effect<Option.Option<Snapshot>>
    /** The ref of main; none for a library nothing was merged into yet. */
    readonly head: (organizationId: OrganizationId) => Effect.Effect<Option.Option<string>>
    /**
     * Moves main to `next` if it is still at `expected` (none: main was never set); otherwise a
     * `Conflict`. `next` must be a commit of the organization (`NotFound`).
     */
    readonly setHead: (
      organizationId: OrganizationId,
      expected: Option.Option<string>,
      next: string
    ) => Effect.Effect<void, Conflict | NotFound>
    /** The diff from `base` (none: the empty library) to `head`. */
    readonly diff: (
      organizationId: OrganizationId,
      base: Option.Option<string>,
      head: string
    ) => Effect.Effect<DiffResult, NotFound>
    /**
     * Merges `theirs` (made against `base`) into `ours` (main as it is now). Conflicts are data,
     * not errors: the caller files the change as `reserved` and shows them to its author.
     */
    readonly merge: (
      organizationId: OrganizationId,
      base: Option.Option<string>,
      ours: Option.Option<string>,
      theirs: string
    ) => Effect.Effect<MergeResult, NotFound>
  }
}

/**
 * Fails with `InvalidRequest` naming the first invalid path.
 *
 * @since 0.1.0
 * @category utils
 */
export const validatePaths = (paths: Iterable<string>): Effect.Effect<void, InvalidRequest> => {
  for (const path of paths) {
    const problem = LibraryDiff.pathProblem(path)
    if (problem !== undefined) return Effect.fail(new InvalidRequest({ message: problem }))
  }
  return Effect.void
}

/**
 * The files of a commit after applying edits to its parent's files.
 *
 * @since 0.1.0
 * @category utils
 */
export const applyChanges = (
  parent: Files,
  changes: HashMap.HashMap<string, Option.Option<Uint8Array>>
): Files =>
  HashMap.reduce(changes, parent, (files, content, path) =>
    Option.match(content, {
      onNone: () => HashMap.remove(files, path),
      onSome: (bytes) => HashMap.set(files, path, bytes)
    }))

// Memory keeps blobs keyed by their own content (base64): identical files share one immutable
// string, and no caller can mutate stored bytes through an array it still holds.
interface StoredCommit {
  readonly organizationId: OrganizationId
  readonly ref: string
  readonly parent: Option.Option<string>
  readonly message: string
  readonly authorId: MemberId
  readonly createdAt: DateTime.Utc
  readonly blobs: HashMap.HashMap<string, string>
}

interface Tables {
  readonly commits: HashMap.HashMap<string, StoredCommit>
  readonly heads: HashMap.HashMap<OrganizationId, string>
  readonly sequence: number
}

const toSnapshot = (commit: StoredCommit): Snapshot => ({
  ref: commit.ref,
  parent: commit.parent,
  message: commit.message,
  author_id: commit.authorId,
  created_at: commit.createdAt,
  files: HashMap.map(commit.blobs, (blob) => Either.getOrThrow(Encoding.decodeBase64(blob)))
})

/**
 * Library snapshots in memory. Refs are 40 hex digits from a counter (the SQL store hashes).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<LibraryStore, never, MemoryState> = Layer.effect(
  LibraryStore,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({ commits: HashMap.empty(), heads: HashMap.empty(), sequence: 0 })
    const key = (organizationId: OrganizationId, ref: string) => `${organizationId}/${ref}`
    const find = (organizationId: OrganizationId, ref: string) =>
      Effect.map(Ref.get(table), (t) => HashMap.get(t.commits, key(organizationId, ref)))
    const load = (organizationId: OrganizationId, ref: string) =>
      Effect.flatMap(
        find(organizationId, ref),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `library commit ${ref} not found` })),
          onSome: (commit) => Effect.succeed(toSnapshot(commit).files)
        })
      )
    const loadOrEmpty = (organizationId: OrganizationId, ref: Option.Option<string>) =>
      Option.match(ref, {
        onNone: () => Effect.succeed<Files>(HashMap.empty()),
        onSome: (r) => load(organizationId, r)
      })

    const store: LibraryStore.Service = {
      commit: (organizationId, input) =>
        state.run(Effect.gen(function*() {
          const parent = Option.fromNullable(input.parent)
          const parentFiles = yield* loadOrEmpty(organizationId, parent)
          const files = "files" in input ? input.files : applyChanges(parentFiles, input.changes)
          yield* validatePaths(HashMap.keys(files))
          const createdAt = yield* DateTime.now
          return yield* Ref.modify(table, (t) => {
            const ref = (t.sequence + 1).toString(16).padStart(40, "0")
            const commit: StoredCommit = {
              organizationId,
              ref,
              parent,
              message: input.message,
              authorId: input.author,
              createdAt,
              blobs: HashMap.map(files, (bytes) => Encoding.encodeBase64(bytes))
            }
            return [ref, {
              ...t,
              sequence: t.sequence + 1,
              commits: HashMap.set(t.commits, key(organizationId, ref), commit)
            }]
          })
        })),
      read: (organizationId, ref) => state.run(Effect.map(find(organizationId, ref), Option.map(toSnapshot))),
      head: (organizationId) => state.run(Effect.map(Ref.get(table), (t) => HashMap.get(t.heads, organizationId))),
      setHead: (organizationId, expected, next) =>
        state.run(Effect.gen(function*() {
          yield* load(organizationId, next)
          const current = HashMap.get((yield* Ref.get(table)).heads, organizationId)
          if (!Option.getEquivalence(Equivalence.string)(current, expected)) {
            return yield* new Conflict({
              message: `the library's main moved: expected ${Option.getOrElse(expected, () => "no commit")}, found ${
                Option.getOrElse(current, () => "no commit")
              }`
            })
          }
          yield* Ref.update(table, (t) => ({ ...t, heads: HashMap.set(t.heads, organizationId, next) }))
        })),
      diff: (organizationId, base, head) =>
        state.run(Effect.gen(function*() {
          const before = yield* loadOrEmpty(organizationId, base)
          const after = yield* load(organizationId, head)
          return LibraryDiff.diffFiles(before, after)
        })),
      merge: (organizationId, base, ours, theirs) =>
        state.run(Effect.gen(function*() {
          const b = yield* loadOrEmpty(organizationId, base)
          const o = yield* loadOrEmpty(organizationId, ours)
          const t = yield* load(organizationId, theirs)
          return LibraryDiff.mergeFiles(b, o, t)
        }))
    }
    return store
  })
)

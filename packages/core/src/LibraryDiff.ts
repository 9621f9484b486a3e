/**
 * Pure diffing and three-way merging of library snapshots (`path -> bytes`), shared by every
 * `LibraryStore` implementation so that the memory and SQL stores answer identically.
 *
 * Line diffs come from jsdiff (`diff`), merges from `node-diff3`; this module only decides what
 * git would call a new file, a deletion, a rename or a binary file, and frames the output.
 *
 * @since 0.1.0
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from "diff"
import * as Arr from "effect/Array"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import { merge as diff3 } from "node-diff3"
import { Diff } from "./Change.js"
import * as Utf8 from "./internal/utf8.js"

/**
 * The files of a snapshot: normalized relative paths to their bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Files = HashMap.HashMap<string, Uint8Array>

/**
 * UTF-8 bytes of a string.
 *
 * @since 0.1.0
 * @category constants
 */
export const encodeText: (text: string) => Uint8Array = Utf8.encodeText

/**
 * A string from UTF-8 bytes (invalid sequences become U+FFFD, as git shows them).
 *
 * @since 0.1.0
 * @category constants
 */
export const decodeText: (bytes: Uint8Array) => string = Utf8.decodeText

/**
 * Git's heuristic: a file is binary when a NUL byte occurs in its first 8000 bytes.
 *
 * @since 0.1.0
 * @category guards
 */
export const isBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, 8000).includes(0)

/**
 * Byte-wise equality.
 *
 * @since 0.1.0
 * @category utils
 */
export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i])

/**
 * Why a path is not a valid library path, or undefined when it is one: relative, `/`-separated,
 * without empty, `.` or `..` segments, backslashes or control characters.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathProblem = (path: string): string | undefined => {
  if (path === "") return "a path must not be empty"
  if (path.startsWith("/")) return `path ${path} must be relative`
  if (/[\u0000-\u001f\\]/.test(path)) return `path ${JSON.stringify(path)} contains a control character or a backslash`
  if (path.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    return `path ${path} has an empty, "." or ".." segment`
  }
  return undefined
}

/**
 * The last segment of a path.
 *
 * @since 0.1.0
 * @category utils
 */
export const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const sortedPaths = (files: Files): Array<string> => Arr.sort(HashMap.keys(files), Order.string)

interface Entry {
  readonly oldPath: string
  readonly newPath: string
  readonly before: Option.Option<Uint8Array>
  readonly after: Option.Option<Uint8Array>
  readonly isRename: boolean
}

/**
 * Pairs every changed path. A rename is an added path whose bytes are identical to a deleted
 * path's (git's 100% similarity); pairs are taken in path order so the result is deterministic.
 */
const entries = (base: Files, head: Files): Array<Entry> => {
  const deleted = sortedPaths(base).filter((p) => !HashMap.has(head, p))
  const added = sortedPaths(head).filter((p) => !HashMap.has(base, p))
  const modified = sortedPaths(head).filter((p) =>
    Option.match(HashMap.get(base, p), {
      onNone: () => false,
      onSome: (before) => !bytesEqual(before, HashMap.unsafeGet(head, p))
    })
  )
  const renamedFrom = new Set<string>()
  const result: Array<Entry> = []
  for (const path of added) {
    const bytes = HashMap.unsafeGet(head, path)
    const source = deleted.find((old) => !renamedFrom.has(old) && bytesEqual(HashMap.unsafeGet(base, old), bytes))
    if (source !== undefined) {
      renamedFrom.add(source)
      result.push({
        oldPath: source,
        newPath: path,
        before: Option.some(bytes),
        after: Option.some(bytes),
        isRename: true
      })
    } else {
      result.push({ oldPath: path, newPath: path, before: Option.none(), after: Option.some(bytes), isRename: false })
    }
  }
  for (const path of deleted) {
    if (renamedFrom.has(path)) continue
    result.push({
      oldPath: path,
      newPath: path,
      before: HashMap.get(base, path),
      after: Option.none(),
      isRename: false
    })
  }
  for (const path of modified) {
    result.push({
      oldPath: path,
      newPath: path,
      before: HashMap.get(base, path),
      after: HashMap.get(head, path),
      isRename: false
    })
  }
  return Arr.sort(result, Order.mapInput(Order.string, (e: Entry) => e.newPath))
}

const textOf = (bytes: Option.Option<Uint8Array>): string =>
  Option.match(bytes, { onNone: () => "", onSome: decodeText })

/** The unified diff of one file's text, without the `diff --git` header. */
const unifiedText = (oldName: string, newName: string, before: string, after: string) => {
  const patch = structuredPatch(oldName, newName, before, after, undefined, undefined, { context: 3 })
  let additions = 0
  let deletions = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) additions++
      else if (line.startsWith("-")) deletions++
    }
  }
  return { additions, deletions, text: patch.hunks.length === 0 ? "" : formatPatch(patch, FILE_HEADERS_ONLY) }
}

/**
 * The diff of two snapshots: one `Diff` per changed file and a git-style unified `raw_diff`.
 *
 * @since 0.1.0
 * @category models
 */
export interface DiffResult {
  readonly diffs: ReadonlyArray<Diff>
  readonly raw_diff: string
}

/**
 * Diffs two snapshots as `git diff` does: new, deleted, modified and (exactly) renamed files, binary
 * files (a NUL byte in the first 8000 bytes) reported without line counts.
 *
 * @since 0.1.0
 * @category utils
 */
export const diffFiles = (base: Files, head: Files): DiffResult => {
  const diffs: Array<Diff> = []
  const sections: Array<string> = []
  for (const entry of entries(base, head)) {
    const isNew = Option.isNone(entry.before)
    const isDelete = Option.isNone(entry.after)
    const binary = [entry.before, entry.after].some((b) => Option.isSome(b) && isBinary(b.value))
    const header = [`diff --git a/${entry.oldPath} b/${entry.newPath}`]
    if (isNew) header.push("new file mode 100644")
    if (isDelete) header.push("deleted file mode 100644")
    if (entry.isRename) {
      header.push("similarity index 100%", `rename from ${entry.oldPath}`, `rename to ${entry.newPath}`)
    }
    const oldName = isNew ? "/dev/null" : `a/${entry.oldPath}`
    const newName = isDelete ? "/dev/null" : `b/${entry.newPath}`
    let additions = 0
    let deletions = 0
    if (binary) {
      if (!entry.isRename) header.push(`Binary files ${oldName} and ${newName} differ`)
    } else if (!entry.isRename) {
      const unified = unifiedText(oldName, newName, textOf(entry.before), textOf(entry.after))
      additions = unified.additions
      deletions = unified.deletions
      if (unified.text !== "") header.push(unified.text.replace(/\n$/, ""))
    }
    sections.push(header.join("\n") + "\n")
    diffs.push(
      new Diff({
        name: baseName(entry.newPath),
        old_path: entry.oldPath,
        new_path: entry.newPath,
        additions,
        deletions,
        is_new: isNew,
        is_delete: isDelete,
        is_rename: entry.isRename,
        is_binary: binary
      })
    )
  }
  return { diffs, raw_diff: sections.join("") }
}

/**
 * Every path a diff touches: old and new paths of renames, sorted and without duplicates.
 *
 * @since 0.1.0
 * @category utils
 */
export const touchedPaths = (diffs: ReadonlyArray<Diff>): Array<string> =>
  Arr.sort(
    Arr.dedupe(diffs.flatMap((d) => (d.old_path === d.new_path ? [d.new_path] : [d.old_path, d.new_path]))),
    Order.string
  )

/**
 * Why a file could not be merged.
 *
 * @since 0.1.0
 * @category models
 */
export type ConflictKind = "content" | "add/add" | "modify/delete" | "binary"

/**
 * One conflicting file of a three-way merge.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileConflict {
  readonly path: string
  readonly kind: ConflictKind
  /** Why, for people: which side did what. */
  readonly reason: string
  /** The file as materialized for the author: text with `<<<<<<<`/`=======`/`>>>>>>>` markers. */
  readonly markers: string
  /** The `.rej` content: the hunks of `theirs` (the change) that could not be applied, as a unified diff. */
  readonly rej: string
}

/**
 * The outcome of a three-way merge.
 *
 * @since 0.1.0
 * @category models
 */
export type MergeResult =
  | { readonly _tag: "Clean"; readonly files: Files }
  | {
    readonly _tag: "Conflicted"
    /** The merged snapshot, conflicting text files carrying markers (others keep `ours`). */
    readonly files: Files
    readonly conflicts: ReadonlyArray<FileConflict>
    /** A human-readable view of every conflict (the seed's `conflicts` string). */
    readonly view: string
  }

/**
 * Labels of the two sides in conflict markers.
 *
 * @since 0.1.0
 * @category models
 */
export interface MergeLabels {
  readonly ours: string
  readonly theirs: string
}

const sameBytes = (a: Option.Option<Uint8Array>, b: Option.Option<Uint8Array>) =>
  Option.isNone(a) ? Option.isNone(b) : Option.isSome(b) && bytesEqual(a.value, b.value)

/**
 * Merges `theirs` (a change made against `base`) into `ours` (main as it is now), file by file:
 * a file changed on one side only takes that side; a file changed on both sides is merged line by
 * line with diff3 and conflicts when both sides edited the same lines, or when one side deleted it,
 * or when it is binary.
 *
 * @since 0.1.0
 * @category utils
 */
export const mergeFiles = (
  base: Files,
  ours: Files,
  theirs: Files,
  labels: MergeLabels = { ours: "main", theirs: "change" }
): MergeResult => {
  const paths = Arr.sort(
    Arr.dedupe([...HashMap.keys(base), ...HashMap.keys(ours), ...HashMap.keys(theirs)]),
    Order.string
  )
  let files: Files = HashMap.empty()
  const conflicts: Array<FileConflict> = []
  const put = (path: string, bytes: Option.Option<Uint8Array>) => {
    if (Option.isSome(bytes)) files = HashMap.set(files, path, bytes.value)
  }
  for (const path of paths) {
    const b = HashMap.get(base, path)
    const o = HashMap.get(ours, path)
    const t = HashMap.get(theirs, path)
    if (sameBytes(o, t) || sameBytes(t, b)) {
      put(path, o)
      continue
    }
    if (sameBytes(o, b)) {
      put(path, t)
      continue
    }
    const rej = rejOf(path, b, t)
    if (Option.isNone(o) || Option.isNone(t)) {
      // The surviving edit is kept so that the author sees what the other side deleted or changed.
      const kept = Option.isSome(o) ? o : t
      put(path, kept)
      conflicts.push({
        path,
        kind: "modify/delete",
        reason: Option.isNone(o)
          ? `${labels.ours} deleted the file that ${labels.theirs} modified`
          : `${labels.theirs} deleted the file that ${labels.ours} modified`,
        markers: Option.match(kept, {
          onNone: () => "",
          onSome: (bytes) => (isBinary(bytes) ? "" : decodeText(bytes))
        }),
        rej
      })
      continue
    }
    if (isBinary(o.value) || isBinary(t.value) || (Option.isSome(b) && isBinary(b.value))) {
      put(path, o)
      conflicts.push({ path, kind: "binary", reason: "both sides changed this binary file", markers: "", rej })
      continue
    }
    const merged = diff3(
      decodeText(o.value).split("\n"),
      textOf(b).split("\n"),
      decodeText(t.value).split("\n"),
      { label: { a: labels.ours, b: labels.theirs } }
    )
    const text = merged.result.join("\n")
    put(path, Option.some(encodeText(text)))
    if (merged.conflict) {
      conflicts.push(
        Option.isNone(b)
          ? { path, kind: "add/add", reason: "both sides added this file with different contents", markers: text, rej }
          : { path, kind: "content", reason: "both sides changed the same lines", markers: text, rej }
      )
    }
  }
  if (conflicts.length === 0) return { _tag: "Clean", files }
  return { _tag: "Conflicted", files, conflicts, view: conflictView(conflicts) }
}

const rejOf = (path: string, before: Option.Option<Uint8Array>, after: Option.Option<Uint8Array>): string => {
  const binary = [before, after].some((x) => Option.isSome(x) && isBinary(x.value))
  const oldName = Option.isNone(before) ? "/dev/null" : `a/${path}`
  const newName = Option.isNone(after) ? "/dev/null" : `b/${path}`
  return binary
    ? `Binary files ${oldName} and ${newName} differ\n`
    : unifiedText(oldName, newName, textOf(before), textOf(after)).text
}

const conflictView = (conflicts: ReadonlyArray<FileConflict>): string =>
  conflicts
    .map((c) => {
      const head = `CONFLICT (${c.kind}): ${c.path}: ${c.reason}`
      return c.kind === "content" || c.kind === "add/add" ? `${head}\n${c.markers}` : head
    })
    .join("\n\n") + "\n"

/**
 * The contract every `LibraryStore` implementation must pass.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { encodeText } from "../LibraryDiff.js"
import { LibraryStore } from "../LibraryStore.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Fixtures from "./Fixtures.js"

/**
 * The ports the suite needs: the store, plus organizations and members to own its commits.
 *
 * @since 0.1.0
 * @category models
 */
export type Needed = LibraryStore | OrganizationRepo | MemberRepo

const text = (s: string) => encodeText(s)
const files = (entries: Record<string, Uint8Array | string>) =>
  HashMap.fromIterable(
    Object.entries(entries).map(([path, content]) =>
      [path, typeof content === "string" ? text(content) : content] as const
    )
  )

/** A fresh organization and member, with a helper committing files on their behalf. */
const setup = Effect.gen(function*() {
  const store = yield* LibraryStore
  const org = yield* Fixtures.organization()
  const author = yield* Fixtures.member(org.id)
  const commit = (entries: Record<string, Uint8Array | string>, parent?: string) =>
    store.commit(org.id, {
      ...(parent === undefined ? {} : { parent }),
      message: "test",
      author: author.id,
      files: files(entries)
    })
  return { store, org, author, commit }
})

const lines = (n: number, edit: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => edit[i + 1] ?? `line ${i + 1}`).join("\n") + "\n"

/**
 * Registers the `LibraryStore` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const libraryStoreContract = (name: string, layer: Layer.Layer<Needed, unknown>): void => {
  describe(`LibraryStore contract: ${name}`, () => {
    it.effect("commit and read round-trip text and binary files", () =>
      Effect.gen(function*() {
        const { author, commit, org, store } = yield* setup
        const binary = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x00, 0x01])
        const ref = yield* commit({ "docs/readme.md": "# Hello\nwörld\n", "img/logo.png": binary, "empty.txt": "" })
        const snapshot = Option.getOrThrow(yield* store.read(org.id, ref))
        expect(snapshot.ref).toBe(ref)
        expect(snapshot.parent).toEqual(Option.none())
        expect(snapshot.author_id).toBe(author.id)
        expect(snapshot.message).toBe("test")
        expect([...HashMap.keys(snapshot.files)].sort()).toEqual(["docs/readme.md", "empty.txt", "img/logo.png"])
        expect(HashMap.unsafeGet(snapshot.files, "docs/readme.md")).toEqual(text("# Hello\nwörld\n"))
        expect(HashMap.unsafeGet(snapshot.files, "img/logo.png")).toEqual(binary)
        expect(HashMap.unsafeGet(snapshot.files, "empty.txt")).toEqual(new Uint8Array())
      }).pipe(Effect.provide(layer)))

    it.effect("stored bytes do not change when the caller's array does", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const bytes = text("original")
        const ref = yield* commit({ "a.txt": bytes })
        bytes[0] = 0
        const snapshot = Option.getOrThrow(yield* store.read(org.id, ref))
        expect(HashMap.unsafeGet(snapshot.files, "a.txt")).toEqual(text("original"))
      }).pipe(Effect.provide(layer)))

    it.effect("a commit of changes edits its parent's files", () =>
      Effect.gen(function*() {
        const { author, commit, org, store } = yield* setup
        const first = yield* commit({ "keep.md": "keep", "drop.md": "drop", "edit.md": "old" })
        const second = yield* store.commit(org.id, {
          parent: first,
          message: "edit",
          author: author.id,
          changes: HashMap.make(["drop.md", Option.none()], ["edit.md", Option.some(text("new"))], [
            "add.md",
            Option.some(text("add"))
          ])
        })
        const snapshot = Option.getOrThrow(yield* store.read(org.id, second))
        expect(snapshot.parent).toEqual(Option.some(first))
        expect([...HashMap.keys(snapshot.files)].sort()).toEqual(["add.md", "edit.md", "keep.md"])
        expect(HashMap.unsafeGet(snapshot.files, "edit.md")).toEqual(text("new"))
        expect(Option.getOrThrow(yield* store.read(org.id, first)).files.pipe(HashMap.size)).toBe(3)
      }).pipe(Effect.provide(layer)))

    it.effect("invalid paths and unknown parents are rejected", () =>
      Effect.gen(function*() {
        const { commit } = yield* setup
        for (const path of ["/abs.md", "a/../b.md", "a//b.md", "./a.md", "dir/", "a\\b.md"]) {
          const error = yield* Effect.flip(commit({ [path]: "x" }))
          expect(error._tag).toBe("InvalidRequest")
        }
        const missing = yield* Effect.flip(commit({ "a.md": "x" }, "0".repeat(40)))
        expect(missing._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("head starts empty and moves only by compare-and-set", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        expect(yield* store.head(org.id)).toEqual(Option.none())
        const first = yield* commit({ "a.md": "1" })
        const second = yield* commit({ "a.md": "2" }, first)
        yield* store.setHead(org.id, Option.none(), first)
        expect(yield* store.head(org.id)).toEqual(Option.some(first))
        const stale = yield* Effect.flip(store.setHead(org.id, Option.none(), second))
        expect(stale._tag).toBe("Conflict")
        const wrong = yield* Effect.flip(store.setHead(org.id, Option.some(second), second))
        expect(wrong._tag).toBe("Conflict")
        yield* store.setHead(org.id, Option.some(first), second)
        expect(yield* store.head(org.id)).toEqual(Option.some(second))
        const unknown = yield* Effect.flip(store.setHead(org.id, Option.some(second), "f".repeat(40)))
        expect(unknown._tag).toBe("NotFound")
        expect(yield* store.head(org.id)).toEqual(Option.some(second))
      }).pipe(Effect.provide(layer)))

    it.effect("commits and heads are scoped to their organization", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const other = yield* Fixtures.organization()
        const ref = yield* commit({ "secret.md": "s" })
        yield* store.setHead(org.id, Option.none(), ref)
        expect(yield* store.read(other.id, ref)).toEqual(Option.none())
        expect(yield* store.head(other.id)).toEqual(Option.none())
        expect((yield* Effect.flip(store.diff(other.id, Option.none(), ref)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(store.setHead(other.id, Option.none(), ref)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(store.merge(other.id, Option.none(), Option.none(), ref)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("diff reports new, deleted, modified, renamed and binary files", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const png = new Uint8Array([1, 0, 2])
        const base = yield* commit({
          "docs/old-name.md": "same\ncontent\n",
          "gone.sql": "select 1;\nselect 2;\n",
          "q.sql": lines(10),
          "logo.png": png
        })
        const head = yield* commit({
          "docs/new-name.md": "same\ncontent\n",
          "new.py": "print(1)\n",
          "q.sql": lines(10, { 5: "changed 5" }) + "line 11\n",
          "logo.png": new Uint8Array([1, 0, 3])
        }, base)
        const { diffs, raw_diff } = yield* store.diff(org.id, Option.some(base), head)
        const byPath = Object.fromEntries(diffs.map((d) => [d.new_path, { ...d }]))
        expect(Object.keys(byPath).sort()).toEqual(["docs/new-name.md", "gone.sql", "logo.png", "new.py", "q.sql"])
        expect(byPath["docs/new-name.md"]).toEqual({
          name: "new-name.md",
          old_path: "docs/old-name.md",
          new_path: "docs/new-name.md",
          additions: 0,
          deletions: 0,
          is_new: false,
          is_delete: false,
          is_rename: true,
          is_binary: false
        })
        expect(byPath["gone.sql"]).toMatchObject({
          old_path: "gone.sql",
          additions: 0,
          deletions: 2,
          is_delete: true,
          is_new: false
        })
        expect(byPath["new.py"]).toMatchObject({ old_path: "new.py", additions: 1, deletions: 0, is_new: true })
        expect(byPath["q.sql"]).toMatchObject({
          additions: 2,
          deletions: 1,
          is_new: false,
          is_rename: false,
          is_binary: false
        })
        expect(byPath["logo.png"]).toMatchObject({ additions: 0, deletions: 0, is_binary: true })
        expect(raw_diff).toContain(
          "diff --git a/docs/old-name.md b/docs/new-name.md\nsimilarity index 100%\nrename from docs/old-name.md\nrename to docs/new-name.md\n"
        )
        expect(raw_diff).toContain(
          "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,1 @@\n+print(1)\n"
        )
        expect(raw_diff).toContain("deleted file mode 100644\n--- a/gone.sql\n+++ /dev/null\n")
        expect(raw_diff).toContain("Binary files a/logo.png and b/logo.png differ\n")
        expect(raw_diff).toContain("-line 5\n+changed 5\n")
      }).pipe(Effect.provide(layer)))

    it.effect("diff from the empty library lists every file as new; identical snapshots have no diff", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const ref = yield* commit({ "a.md": "a\n", "b/c.md": "c\n" })
        const initial = yield* store.diff(org.id, Option.none(), ref)
        expect(initial.diffs.map((d) => [d.new_path, d.is_new, d.additions])).toEqual([["a.md", true, 1], [
          "b/c.md",
          true,
          1
        ]])
        const same = yield* commit({ "a.md": "a\n", "b/c.md": "c\n" }, ref)
        expect(yield* store.diff(org.id, Option.some(ref), same)).toEqual({ diffs: [], raw_diff: "" })
      }).pipe(Effect.provide(layer)))

    it.effect("merge combines edits to different files and different lines", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const base = yield* commit({ "q.sql": lines(12), "a.md": "a\n" })
        const ours = yield* commit({ "q.sql": lines(12, { 2: "main 2" }), "a.md": "a\n", "main.md": "m\n" }, base)
        const theirs = yield* commit({ "q.sql": lines(12, { 11: "change 11" }), "change.md": "c\n" }, base)
        const result = yield* store.merge(org.id, Option.some(base), Option.some(ours), theirs)
        if (result._tag !== "Clean") throw new Error(`expected a clean merge, got ${JSON.stringify(result)}`)
        expect([...HashMap.keys(result.files)].sort()).toEqual(["change.md", "main.md", "q.sql"])
        expect(HashMap.unsafeGet(result.files, "q.sql")).toEqual(text(lines(12, { 2: "main 2", 11: "change 11" })))
      }).pipe(Effect.provide(layer)))

    it.effect("merge reports conflicting files with a view and .rej content", () =>
      Effect.gen(function*() {
        const { commit, org, store } = yield* setup
        const base = yield* commit({ "q.sql": lines(3), "del.md": "x\n", "bin.dat": new Uint8Array([0, 1]) })
        const ours = yield* commit({ "q.sql": lines(3, { 2: "main" }), "bin.dat": new Uint8Array([0, 2]) }, base)
        const theirs = yield* commit({
          "q.sql": lines(3, { 2: "change" }),
          "del.md": "y\n",
          "bin.dat": new Uint8Array([0, 3])
        }, base)
        const result = yield* store.merge(org.id, Option.some(base), Option.some(ours), theirs)
        if (result._tag !== "Conflicted") throw new Error("expected conflicts")
        expect(result.conflicts.map((c) => [c.path, c.kind])).toEqual([
          ["bin.dat", "binary"],
          ["del.md", "modify/delete"],
          ["q.sql", "content"]
        ])
        const q = result.conflicts[2]!
        expect(q.markers).toBe("line 1\n<<<<<<< main\nmain\n=======\nchange\n>>>>>>> change\nline 3\n")
        expect(q.rej).toContain("-line 2\n+change\n")
        expect(HashMap.unsafeGet(result.files, "q.sql")).toEqual(text(q.markers))
        expect(result.view).toContain("CONFLICT (content): q.sql")
        expect(result.view).toContain("CONFLICT (modify/delete): del.md: main deleted the file that change modified")
        expect(result.view).toContain("<<<<<<< main")
      }).pipe(Effect.provide(layer)))
  })
}

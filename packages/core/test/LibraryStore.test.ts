import { describe, expect, it } from "@effect/vitest"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as LibraryDiff from "../src/LibraryDiff.js"
import * as LibraryStore from "../src/LibraryStore.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import { libraryStoreContract } from "../src/testing/LibraryStoreContract.js"
import * as Transaction from "../src/Transaction.js"

libraryStoreContract(
  "memory",
  Layer.mergeAll(LibraryStore.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
    Layer.provide(Transaction.layerMemory)
  )
)

const files = (entries: Record<string, string | Uint8Array>): LibraryDiff.Files =>
  HashMap.fromIterable(
    Object.entries(entries).map(([p, c]) => [p, typeof c === "string" ? LibraryDiff.encodeText(c) : c] as const)
  )

describe("libraryDiff", () => {
  it("detects binary files by a NUL byte in the first 8000 bytes, as git does", () => {
    const late = new Uint8Array(8001).fill(65)
    late[8000] = 0
    expect(LibraryDiff.isBinary(late)).toBe(false)
    late[7999] = 0
    expect(LibraryDiff.isBinary(late)).toBe(true)
    expect(LibraryDiff.isBinary(LibraryDiff.encodeText("plain ✓ text"))).toBe(false)
  })

  it("pairs each deleted file with at most one identical added file", () => {
    const { diffs } = LibraryDiff.diffFiles(
      files({ "a.md": "same\n", "b.md": "same\n" }),
      files({ "c.md": "same\n", "d.md": "same\n", "e.md": "same\n" })
    )
    expect(diffs.map((d) => [d.old_path, d.new_path, d.is_rename, d.is_new])).toEqual([
      ["a.md", "c.md", true, false],
      ["b.md", "d.md", true, false],
      ["e.md", "e.md", false, true]
    ])
    expect(LibraryDiff.touchedPaths(diffs)).toEqual(["a.md", "b.md", "c.md", "d.md", "e.md"])
  })

  it("writes a new binary file as git does", () => {
    const { diffs, raw_diff } = LibraryDiff.diffFiles(HashMap.empty(), files({ "x.bin": new Uint8Array([0]) }))
    expect(diffs[0]).toMatchObject({ is_new: true, is_binary: true, additions: 0 })
    expect(raw_diff).toBe(
      "diff --git a/x.bin b/x.bin\nnew file mode 100644\nBinary files /dev/null and b/x.bin differ\n"
    )
  })

  it("merges identical edits on both sides and add/add conflicts", () => {
    const same = LibraryDiff.mergeFiles(files({}), files({ "n.md": "x\n" }), files({ "n.md": "x\n" }))
    expect(same._tag).toBe("Clean")
    const clash = LibraryDiff.mergeFiles(files({}), files({ "n.md": "x\n" }), files({ "n.md": "y\n" }))
    expect(clash._tag === "Conflicted" && clash.conflicts.map((c) => c.kind)).toEqual(["add/add"])
    const deletedBoth = LibraryDiff.mergeFiles(files({ "d.md": "x" }), files({}), files({}))
    expect(deletedBoth._tag === "Clean" && HashMap.size(deletedBoth.files)).toBe(0)
  })

  it.each([
    ["ok/path.md", undefined],
    ["", "must not be empty"],
    ["/etc/passwd", "must be relative"],
    ["a/./b", "segment"],
    ["a\u0000b", "control character"]
  ])("pathProblem(%j)", (path, problem) => {
    const result = LibraryDiff.pathProblem(path)
    if (problem === undefined) expect(result).toBeUndefined()
    else expect(result).toContain(problem)
  })
})

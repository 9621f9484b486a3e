import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { OrganizationId, SandboxId } from "../src/Ids.js"
import {
  diffLibrary,
  isHidden,
  layerMemory,
  layerMemoryWith,
  MemorySandboxRuntime,
  SandboxRuntime,
  toEdits,
  validatePath
} from "../src/SandboxRuntime.js"
import { sandboxRuntimeContract } from "../src/testing/SandboxRuntimeContract.js"

sandboxRuntimeContract("layerMemory", layerMemory, { runsCode: false })

const sandboxId = SandboxId.make("0b6f3a52-6d5e-4a8e-9b1e-2f0c4d5e6f70")
const organizationId = OrganizationId.make("6f9619ff-8b86-4d11-b42d-00c04fc964ff")
const bytes = (text: string) => new TextEncoder().encode(text)

describe("SandboxRuntime.validatePath", () => {
  it("normalizes a trailing slash and keeps nested relative paths", () => {
    expect(validatePath("a/b/")).toEqual(Either.right("a/b"))
    expect(validatePath("library/sales/q1.sql")).toEqual(Either.right("library/sales/q1.sql"))
    expect(validatePath("file.with.dots.txt")).toEqual(Either.right("file.with.dots.txt"))
  })

  it.each(["", "/", "/abs", "../up", "a/..", "a/./b", "a//b", ".env", "a/.git/config", "a\\b", "a\0b"])(
    "rejects %j as invalid_request",
    (path) => {
      const result = validatePath(path)
      expect(Either.isLeft(result) && result.left.code).toBe("invalid_request")
    }
  )

  it("tells hidden paths apart", () => {
    expect(isHidden("a/.cache/x")).toBe(true)
    expect(isHidden("a/b.c")).toBe(false)
  })
})

describe("SandboxRuntime.diffLibrary", () => {
  it("compares content, not identity, and ignores dotfiles", () => {
    const snapshot = HashMap.fromIterable([["a", bytes("1")], ["b", bytes("2")], [".x", bytes("x")]])
    const current = HashMap.fromIterable([["a", bytes("1")], ["b", bytes("22")], [".y", bytes("y")], ["c", bytes("3")]])
    expect(diffLibrary(snapshot, current).map((c) => [c.path, c.status])).toEqual([["b", "modified"], ["c", "added"]])
    expect(diffLibrary(current, snapshot).map((c) => [c.path, c.status])).toEqual([["b", "modified"], ["c", "deleted"]])
  })

  it("turns changes into edits: new bytes for added and modified files, none for deleted ones", () => {
    const edits = toEdits([
      { path: "a", status: "added", content: bytes("1") },
      { path: "b", status: "modified", content: bytes("2") },
      { path: "c", status: "deleted" }
    ])
    expect(HashMap.size(edits)).toBe(3)
    expect(HashMap.get(edits, "a")).toEqual(Option.some(Option.some(bytes("1"))))
    expect(HashMap.get(edits, "c")).toEqual(Option.some(Option.none()))
  })
})

describe("SandboxRuntime.layerMemory", () => {
  it.effect("records code and answers with scripted results", () =>
    Effect.gen(function*() {
      const runtime = yield* SandboxRuntime
      yield* runtime.start({ sandboxId, organizationId, libraryFiles: HashMap.empty() })
      const result = yield* runtime.execute(sandboxId, "df = load()")
      expect(result.output).toEqual(["ran df = load()"])
      expect((yield* runtime.exec(sandboxId, { command: "ls", kind: "bash" })).stdout).toBe("bash: ls")
      const status = yield* runtime.status(sandboxId)
      expect(status.dataframes).toEqual([{ name: "df", numRows: 2, numCols: 3, memoryUsageBytes: 0 }])
      const runs = yield* Effect.flatMap(MemorySandboxRuntime, (memory) => memory.runs)
      expect(runs).toEqual([
        { sandboxId, kind: "kernel", code: "df = load()" },
        { sandboxId, kind: "bash", code: "ls" }
      ])
    }).pipe(Effect.provide(layerMemoryWith({
      execute: (code) => ({
        output: [`ran ${code}`],
        executionTimeMs: 1,
        files: [],
        dataframes: [{ name: "df", numRows: 2, numCols: 3 }]
      }),
      exec: (options) => ({ stdout: `${options.kind}: ${options.command}`, stderr: "", exitCode: 0 })
    }))))

  it.effect("answers nothing by default", () =>
    Effect.gen(function*() {
      const runtime = yield* SandboxRuntime
      yield* runtime.start({ sandboxId, organizationId, libraryFiles: HashMap.empty() })
      expect(yield* runtime.execute(sandboxId, "1")).toEqual({
        output: null,
        executionTimeMs: 0,
        files: [],
        dataframes: []
      })
      expect(yield* runtime.exec(sandboxId, { command: "true", kind: "python" })).toEqual({
        stdout: "",
        stderr: "",
        exitCode: 0
      })
    }).pipe(Effect.provide(layerMemory)))

  it.effect("dies on a library path that escapes the mount", () =>
    Effect.gen(function*() {
      const runtime = yield* SandboxRuntime
      const exit = yield* Effect.exit(
        runtime.start({
          sandboxId,
          organizationId,
          libraryFiles: HashMap.fromIterable([["../etc/passwd", bytes("x")]])
        })
      )
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      expect((yield* runtime.status(sandboxId)).status).toBe("stopped")
    }).pipe(Effect.provide(layerMemory)))

  it.effect("does not let a caller mutate stored bytes through the buffer it wrote", () =>
    Effect.gen(function*() {
      const runtime = yield* SandboxRuntime
      yield* runtime.start({ sandboxId, organizationId, libraryFiles: HashMap.empty() })
      const buffer = bytes("abc")
      yield* runtime.writeFile(sandboxId, "f.txt", buffer)
      buffer[0] = 120
      const read = yield* runtime.readFile(sandboxId, "f.txt")
      expect(read._tag === "Some" && new TextDecoder().decode(read.value)).toBe("abc")
    }).pipe(Effect.provide(layerMemory)))
})

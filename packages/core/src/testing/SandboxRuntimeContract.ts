/**
 * The contract every `SandboxRuntime` satisfies: lifecycle, files, path rules, the library mount and
 * library changes. The tests that need a real Python interpreter and shell run only when the suite is
 * told the runtime `runsCode`; a runtime that cannot run code does not register them.
 *
 * Every test starts its own sandbox with a fresh random id and stops it at the end. The suite runs on
 * real time (`it.live`) because a real runtime waits on processes.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { OrganizationId, SandboxId } from "../Ids.js"
import { type LibraryFiles, SandboxRuntime } from "../SandboxRuntime.js"
import { uuid } from "./Fixtures.js"

/**
 * What the runtime under test can do.
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxRuntimeContractOptions {
  /** Whether `execute` and `exec` really run Python and bash (false for fakes). */
  readonly runsCode: boolean
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const bytes = (text: string) => encoder.encode(text)
const text = (content: Option.Option<Uint8Array>) => Option.map(content, (b) => decoder.decode(b))

const library = HashMap.fromIterable([
  ["sales/q1.sql", bytes("select 1")],
  ["sales/q2.sql", bytes("select 2")],
  ["README.md", bytes("# Library")],
  ["OWNERS", bytes("alice@example.com")],
  [".hidden.sql", bytes("select 'hidden'")],
  ["sales/.cache/x", bytes("cache")]
])

/** Starts a fresh sandbox with the contract library, runs `f` with it, and stops it whatever happens. */
const withSandbox = <A, E, R>(
  f: (runtime: SandboxRuntime.Service, sandboxId: SandboxId) => Effect.Effect<A, E, R>,
  libraryFiles: LibraryFiles = library
) =>
  Effect.gen(function*() {
    const runtime = yield* SandboxRuntime
    const sandboxId = SandboxId.make(uuid())
    yield* Effect.orDie(runtime.start({ sandboxId, organizationId: OrganizationId.make(uuid()), libraryFiles }))
    return yield* Effect.ensuring(f(runtime, sandboxId), runtime.stop(sandboxId))
  })

const badPaths = ["../x", "/etc/passwd", "a/../../b", "a//b", "./a", ".env", "notes/.secret", "a\\..\\b", "a\0b"]

/**
 * Registers the `SandboxRuntime` contract suite for an implementation.
 *
 * @since 0.1.0
 * @category utils
 */
export const sandboxRuntimeContract = (
  name: string,
  layer: Layer.Layer<SandboxRuntime, unknown>,
  options: SandboxRuntimeContractOptions
): void => {
  describe(`SandboxRuntime contract: ${name}`, () => {
    it.live("runs from start to stop, and a stopped sandbox refuses work", () =>
      Effect.gen(function*() {
        const runtime = yield* SandboxRuntime
        const sandboxId = SandboxId.make(uuid())
        expect((yield* runtime.status(sandboxId)).status).toBe("stopped")
        yield* runtime.start({ sandboxId, organizationId: OrganizationId.make(uuid()), libraryFiles: HashMap.empty() })
        expect((yield* runtime.status(sandboxId)).status).toBe("running")
        yield* runtime.stop(sandboxId)
        expect((yield* runtime.status(sandboxId)).status).toBe("stopped")
        yield* runtime.stop(sandboxId)
        const refusals = yield* Effect.all([
          Effect.flip(runtime.execute(sandboxId, "1")),
          Effect.flip(runtime.exec(sandboxId, { command: "true", kind: "bash" })),
          Effect.flip(runtime.listFiles(sandboxId)),
          Effect.flip(runtime.readFile(sandboxId, "a.txt")),
          Effect.flip(runtime.writeFile(sandboxId, "a.txt", bytes("a"))),
          Effect.flip(runtime.deleteFile(sandboxId, "a.txt")),
          Effect.flip(runtime.libraryChanges(sandboxId)),
          Effect.flip(runtime.mountLibrary(sandboxId, HashMap.empty()))
        ])
        expect(refusals.map((error) => error._tag)).toEqual(Array(8).fill("SandboxNotRunning"))
      }).pipe(Effect.provide(layer)))

    it.live("refuses to start a sandbox that is already running", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(
            runtime.start({ sandboxId, organizationId: OrganizationId.make(uuid()), libraryFiles: HashMap.empty() })
          )
          expect(error._tag).toBe("Conflict")
          expect((yield* runtime.status(sandboxId)).status).toBe("running")
        })
      ).pipe(Effect.provide(layer)))

    it.live("round-trips files, including binary content, and lists directories", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          const binary = Uint8Array.from([0, 1, 2, 254, 255, 10, 13])
          yield* runtime.writeFile(sandboxId, "notes/a.txt", bytes("first"))
          yield* runtime.writeFile(sandboxId, "notes/a.txt", bytes("second"))
          yield* runtime.writeFile(sandboxId, "notes/deep/b.bin", binary)
          expect(text(yield* runtime.readFile(sandboxId, "notes/a.txt"))).toEqual(Option.some("second"))
          expect(yield* runtime.readFile(sandboxId, "notes/deep/b.bin")).toEqual(Option.some(binary))

          const root = Option.getOrThrow(yield* runtime.listFiles(sandboxId))
          expect(root.filter((e) => e.name === "notes" || e.name === "library").map((e) => [e.name, e.isDir]))
            .toEqual([["library", true], ["notes", true]])
          const notes = Option.getOrThrow(yield* runtime.listFiles(sandboxId, "notes"))
          expect(notes.map((e) => [e.name, e.isDir])).toEqual([["a.txt", false], ["deep", true]])
          expect(notes[0]!.sizeBytes).toBe(6)
          expect(Option.getOrThrow(yield* runtime.listFiles(sandboxId, "notes/deep/"))[0]!.sizeBytes).toBe(7)

          expect(yield* runtime.listFiles(sandboxId, "missing")).toEqual(Option.none())
          expect(yield* runtime.listFiles(sandboxId, "notes/a.txt")).toEqual(Option.none())
          expect(yield* runtime.readFile(sandboxId, "notes/missing.txt")).toEqual(Option.none())
          expect(yield* runtime.readFile(sandboxId, "notes")).toEqual(Option.none())
        })
      ).pipe(Effect.provide(layer)))

    it.live("deletes files and whole directories", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          yield* runtime.writeFile(sandboxId, "out/a.csv", bytes("a"))
          yield* runtime.writeFile(sandboxId, "out/sub/b.csv", bytes("b"))
          yield* runtime.writeFile(sandboxId, "keep.txt", bytes("k"))
          expect(yield* runtime.deleteFile(sandboxId, "out/a.csv")).toBe(true)
          expect(yield* runtime.readFile(sandboxId, "out/a.csv")).toEqual(Option.none())
          expect(yield* runtime.deleteFile(sandboxId, "out/a.csv")).toBe(false)
          expect(yield* runtime.deleteFile(sandboxId, "out")).toBe(true)
          expect(yield* runtime.readFile(sandboxId, "out/sub/b.csv")).toEqual(Option.none())
          expect(yield* runtime.listFiles(sandboxId, "out")).toEqual(Option.none())
          expect(text(yield* runtime.readFile(sandboxId, "keep.txt"))).toEqual(Option.some("k"))
        })
      ).pipe(Effect.provide(layer)))

    it.live("rejects writes where a file or a directory is in the way", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          yield* runtime.writeFile(sandboxId, "plain.txt", bytes("x"))
          yield* runtime.writeFile(sandboxId, "dir/inner.txt", bytes("y"))
          expect((yield* Effect.flip(runtime.writeFile(sandboxId, "plain.txt/child", bytes("z"))))._tag)
            .toBe("InvalidRequest")
          expect((yield* Effect.flip(runtime.writeFile(sandboxId, "dir", bytes("z"))))._tag).toBe("InvalidRequest")
          expect(text(yield* runtime.readFile(sandboxId, "dir/inner.txt"))).toEqual(Option.some("y"))
        })
      ).pipe(Effect.provide(layer)))

    it.live("rejects traversal, absolute paths and dotfiles in every file operation", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          for (const path of badPaths) {
            const errors = yield* Effect.all([
              Effect.flip(runtime.readFile(sandboxId, path)),
              Effect.flip(runtime.writeFile(sandboxId, path, bytes("x"))),
              Effect.flip(runtime.deleteFile(sandboxId, path)),
              Effect.flip(runtime.listFiles(sandboxId, path))
            ])
            expect(errors.map((error) => error._tag), path).toEqual(Array(4).fill("InvalidRequest"))
          }
          expect(Option.isSome(yield* runtime.readFile(sandboxId, "library/README.md"))).toBe(true)
        })
      ).pipe(Effect.provide(layer)))

    it.live("mounts the library under library/ and hides dotfiles from listings", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          expect(text(yield* runtime.readFile(sandboxId, "library/sales/q1.sql"))).toEqual(Option.some("select 1"))
          expect(text(yield* runtime.readFile(sandboxId, "library/OWNERS"))).toEqual(Option.some("alice@example.com"))
          const top = Option.getOrThrow(yield* runtime.listFiles(sandboxId, "library"))
          expect(top.map((e) => e.name)).toEqual(["OWNERS", "README.md", "sales"])
          const sales = Option.getOrThrow(yield* runtime.listFiles(sandboxId, "library/sales"))
          expect(sales.map((e) => e.name)).toEqual(["q1.sql", "q2.sql"])
          expect((yield* Effect.flip(runtime.readFile(sandboxId, "library/.hidden.sql")))._tag).toBe("InvalidRequest")
        })
      ).pipe(Effect.provide(layer)))

    it.live("reports library changes against the mounted snapshot", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          expect(yield* runtime.libraryChanges(sandboxId)).toEqual([])
          yield* runtime.writeFile(sandboxId, "library/sales/q1.sql", bytes("select 11"))
          yield* runtime.writeFile(sandboxId, "library/sales/q2.sql", bytes("select 2"))
          yield* runtime.writeFile(sandboxId, "library/new/q3.sql", bytes("select 3"))
          yield* runtime.deleteFile(sandboxId, "library/README.md")
          yield* runtime.writeFile(sandboxId, "scratch.txt", bytes("not library"))
          const changes = yield* runtime.libraryChanges(sandboxId)
          expect(changes.map((c) => [c.path, c.status, c.content && decoder.decode(c.content)])).toEqual([
            ["README.md", "deleted", undefined],
            ["new/q3.sql", "added", "select 3"],
            ["sales/q1.sql", "modified", "select 11"]
          ])
        })
      ).pipe(Effect.provide(layer)))

    it.live("remounting the library replaces it and makes it the new snapshot", () =>
      withSandbox((runtime, sandboxId) =>
        Effect.gen(function*() {
          yield* runtime.writeFile(sandboxId, "library/draft.sql", bytes("select 9"))
          yield* runtime.writeFile(sandboxId, "work.py", bytes("print(1)"))
          yield* runtime.mountLibrary(sandboxId, HashMap.fromIterable([["sales/q1.sql", bytes("select 1 -- merged")]]))
          expect(yield* runtime.libraryChanges(sandboxId)).toEqual([])
          expect(yield* runtime.readFile(sandboxId, "library/draft.sql")).toEqual(Option.none())
          expect(yield* runtime.readFile(sandboxId, "library/sales/q2.sql")).toEqual(Option.none())
          expect(text(yield* runtime.readFile(sandboxId, "library/sales/q1.sql"))).toEqual(
            Option.some("select 1 -- merged")
          )
          expect(text(yield* runtime.readFile(sandboxId, "work.py"))).toEqual(Option.some("print(1)"))
        })
      ).pipe(Effect.provide(layer)))

    it.live("discards the workspace on stop", () =>
      Effect.gen(function*() {
        const runtime = yield* SandboxRuntime
        const sandboxId = SandboxId.make(uuid())
        const start = runtime.start({ sandboxId, organizationId: OrganizationId.make(uuid()), libraryFiles: library })
        yield* start
        yield* runtime.writeFile(sandboxId, "tmp.txt", bytes("x"))
        yield* runtime.writeFile(sandboxId, "library/sales/q1.sql", bytes("edited"))
        yield* runtime.stop(sandboxId)
        yield* start
        yield* Effect.ensuring(
          Effect.gen(function*() {
            expect(yield* runtime.readFile(sandboxId, "tmp.txt")).toEqual(Option.none())
            expect(yield* runtime.libraryChanges(sandboxId)).toEqual([])
          }),
          runtime.stop(sandboxId)
        )
      }).pipe(Effect.provide(layer)))

    // A runtime that cannot run code (the memory fake) has nothing to prove here: the tests are not
    // registered at all rather than reported as skipped, so no run ever shows a skip for them.
    if (options.runsCode) {
      describe("running code", () => {
        const runs = it.live

        runs(
          "keeps kernel state between executions and reports exceptions as results",
          () =>
            withSandbox((runtime, sandboxId) =>
              Effect.gen(function*() {
                const first = yield* runtime.execute(sandboxId, "x = 41")
                expect(first.error).toBeUndefined()
                const second = yield* runtime.execute(sandboxId, "print(x + 1)")
                expect((second.output ?? []).join("")).toContain("42")
                expect(second.executionTimeMs).toBeGreaterThanOrEqual(0)
                const failed = yield* runtime.execute(sandboxId, "1 / 0")
                expect(failed.error).toContain("ZeroDivisionError")
              })
            ).pipe(Effect.provide(layer)),
          60_000
        )

        runs("reports dataframes left in the kernel", () =>
          withSandbox((runtime, sandboxId) =>
            Effect.gen(function*() {
              const result = yield* runtime.execute(
                sandboxId,
                "import pandas as pd\nsales = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})"
              )
              expect(result.dataframes).toContainEqual({ name: "sales", numRows: 3, numCols: 2 })
              const status = yield* runtime.status(sandboxId)
              expect(status.dataframes.map((df) => df.name)).toContain("sales")
            })
          ).pipe(Effect.provide(layer)), 60_000)

        runs(
          "runs one-shot bash and python with exit codes and environment",
          () =>
            withSandbox((runtime, sandboxId) =>
              Effect.gen(function*() {
                const bash = yield* runtime.exec(sandboxId, {
                  command: "echo \"$GREETING\"; echo oops >&2; exit 3",
                  kind: "bash",
                  env: { GREETING: "hi" }
                })
                expect(bash).toMatchObject({ stdout: "hi\n", stderr: "oops\n", exitCode: 3 })
                const python = yield* runtime.exec(sandboxId, { command: "print(6 * 7)", kind: "python" })
                expect(python).toMatchObject({ stdout: "42\n", exitCode: 0 })
              })
            ).pipe(Effect.provide(layer)),
          60_000
        )

        runs(
          "shares the workspace between code and the files API",
          () =>
            withSandbox((runtime, sandboxId) =>
              Effect.gen(function*() {
                yield* runtime.exec(sandboxId, {
                  command: "printf data > out.txt && touch .dotfile && printf edited > library/sales/q1.sql",
                  kind: "bash"
                })
                expect(text(yield* runtime.readFile(sandboxId, "out.txt"))).toEqual(Option.some("data"))
                const root = Option.getOrThrow(yield* runtime.listFiles(sandboxId))
                expect(root.map((e) => e.name)).toContain("out.txt")
                expect(root.map((e) => e.name)).not.toContain(".dotfile")
                const changes = yield* runtime.libraryChanges(sandboxId)
                expect(changes.map((c) => [c.path, c.status])).toEqual([["sales/q1.sql", "modified"]])
              })
            ).pipe(Effect.provide(layer)),
          60_000
        )
      })
    }
  })
}

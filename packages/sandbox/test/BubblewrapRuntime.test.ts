import { describe, expect, it } from "@effect/vitest"
import { OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Metrics from "@sightline/core/Metrics"
import { SandboxRuntime } from "@sightline/core/SandboxRuntime"
import { sandboxRuntimeContract } from "@sightline/core/testing/SandboxRuntimeContract"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as BubblewrapRuntime from "../src/BubblewrapRuntime.js"

const unavailable = Option.getOrUndefined(BubblewrapRuntime.availability())
if (unavailable !== undefined && process.env.CI === "true") {
  throw new Error(`sandboxes cannot run here (CI=true, so this fails): ${unavailable}`)
}

const asRoot = typeof process.getuid === "function" && process.getuid() === 0

const directory = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-sandbox-test-"))
const limits: Partial<BubblewrapRuntime.Limits> = {
  memoryBytes: 1024 ** 3,
  executionTimeoutMillis: 5_000,
  processes: 32,
  fileSizeBytes: 8 * 1024 ** 2,
  workspaceBytes: 32 * 1024 ** 2,
  tmpBytes: 4 * 1024 ** 2,
  outputBytes: 64 * 1024
}
const layer = BubblewrapRuntime.layer({ directory, limits })

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

const withSandbox = <A, E>(f: (runtime: SandboxRuntime.Service, id: SandboxId) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const runtime = yield* SandboxRuntime
    const id = SandboxId.make(randomUUID())
    yield* Effect.orDie(runtime.start({
      sandboxId: id,
      organizationId: OrganizationId.make(randomUUID()),
      libraryFiles: HashMap.make(["sales/q1.sql", bytes("select 1")])
    }))
    return yield* Effect.ensuring(f(runtime, id), runtime.stop(id))
  })

describe.skipIf(unavailable !== undefined)(
  `BubblewrapRuntime${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    sandboxRuntimeContract("BubblewrapRuntime", layer, { runsCode: true })

    it.live("counts its running sandboxes in the sightline_sandboxes_running gauge", () =>
      Effect.gen(function*() {
        const running = Effect.map(Metric.value(Metrics.sandboxesRunning), (state) => state.value)
        const before = yield* running
        yield* withSandbox(() =>
          Effect.flatMap(running, (during) => Effect.sync(() => expect(during).toBe(before + 1)))
        )
        expect(yield* running).toBe(before)
      }).pipe(Effect.provide(layer)))

    describe("isolation", () => {
      it.live("has no network: the host's PostgreSQL port cannot be reached", () =>
        withSandbox((runtime, id) =>
          Effect.gen(function*() {
            const result = yield* runtime.exec(id, {
              kind: "python",
              command: "import socket\ns = socket.socket()\ns.settimeout(2)\nprint(s.connect_ex(('127.0.0.1', 5432)))"
            })
            expect(result.exitCode).toBe(0)
            expect(result.stdout.trim()).not.toBe("0")
          })
        ).pipe(Effect.provide(layer)))

      it.live("cannot read the host's files, the data directory or another sandbox's workspace", () =>
        Effect.gen(function*() {
          const runtime = yield* SandboxRuntime
          const other = SandboxId.make(randomUUID())
          yield* Effect.orDie(
            runtime.start({
              sandboxId: other,
              organizationId: OrganizationId.make(randomUUID()),
              libraryFiles: HashMap.empty()
            })
          )
          yield* runtime.writeFile(other, "secret.txt", bytes("other sandbox's secret"))
          const otherPath = fs.readdirSync(directory).flatMap((instance) => {
            const candidate = NodePath.join(directory, instance, other, "volume", "files", "secret.txt")
            return fs.existsSync(candidate) ? [candidate] : []
          })[0]!
          expect(otherPath).toBeDefined()
          yield* Effect.ensuring(
            withSandbox((_, id) =>
              Effect.gen(function*() {
                const result = yield* runtime.exec(id, {
                  kind: "bash",
                  command: `cat /etc/shadow; echo "[$?]"; cat ${JSON.stringify(otherPath)}; echo "[$?]"; ls ${
                    JSON.stringify(directory)
                  }; echo "[$?]"; ls /root; echo "[$?]"`
                })
                expect(result.stdout).not.toContain("other sandbox's secret")
                expect(result.stdout).not.toContain("root:")
                expect(result.stdout.match(/\[(\d+)\]/g)).toEqual(["[1]", "[1]", "[2]", "[2]"])
              })
            ),
            runtime.stop(other)
          )
        }).pipe(Effect.provide(layer)))

      it.live("can write only in /sandbox/files (and its own /tmp)", () =>
        withSandbox((runtime, id) =>
          Effect.gen(function*() {
            const result = yield* runtime.exec(id, {
              kind: "bash",
              command:
                "for p in /usr/evil /etc/evil /evil /opt/sightline/evil; do touch $p 2>/dev/null && echo wrote $p; done; " +
                "touch /tmp/ok && echo tmp; touch /sandbox/files/ok && echo files"
            })
            expect(result.stdout.trim().split("\n")).toEqual(["tmp", "files"])
            expect(fs.existsSync("/evil")).toBe(false)
          })
        ).pipe(Effect.provide(layer)))
    })

    describe("limits", () => {
      it.live(
        "a while-True cell is killed at the timeout, the kernel restarts, and the sandbox keeps working",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              yield* runtime.execute(id, "x = 1")
              const started = Date.now()
              const spin = yield* runtime.execute(id, "while True:\n    pass")
              expect(Date.now() - started).toBeLessThan(15_000)
              expect(spin.error).toContain("timed out")
              const after = yield* runtime.execute(id, "print('alive')\n'x' in globals()")
              expect(after.output).toEqual(["alive", "False"])
            })
          ).pipe(Effect.provide(layer)),
        30_000
      )

      it.live("a memory hog fails inside its cell", () =>
        withSandbox((runtime, id) =>
          Effect.gen(function*() {
            const hog = yield* runtime.execute(id, "x = bytearray(4 * 1024 ** 3)")
            expect(hog.error).toMatch(/MemoryError|killed|stopped/)
            expect((yield* runtime.execute(id, "1 + 1")).output).toEqual(["2"])
          })
        ).pipe(Effect.provide(layer)), 30_000)

      it.live("a fork bomb is contained and the server keeps answering", () =>
        Effect.gen(function*() {
          const server = http.createServer((_, res) => res.end("ok"))
          yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
          const port = (server.address() as { port: number }).port
          yield* Effect.ensuring(
            withSandbox((runtime, id) =>
              Effect.gen(function*() {
                const bomb = runtime.exec(id, { kind: "bash", command: "bomb() { bomb | bomb & }; bomb; sleep 3" })
                const fiber = yield* Effect.fork(bomb)
                yield* Effect.sleep("1 second")
                const answer = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text()))
                expect(answer).toBe("ok")
                yield* fiber.await
                expect((yield* runtime.exec(id, { kind: "bash", command: "echo fine" })).stdout).toBe("fine\n")
              })
            ),
            Effect.sync(() => server.close())
          )
        }).pipe(Effect.provide(layer)), 60_000)

      it.live(
        "caps one-shot output and kills a command at the timeout without an HTTP-style failure",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              const loud = yield* runtime.exec(id, { kind: "bash", command: "yes | head -c 1000000" })
              expect(loud.stdout.length).toBeLessThan(70 * 1024)
              expect(loud.stdout.endsWith("…[truncated]")).toBe(true)
              const slow = yield* runtime.exec(id, { kind: "bash", command: "sleep 60" })
              expect(slow.error).toContain("timed out")
            })
          ).pipe(Effect.provide(layer)),
        30_000
      )
    })

    describe("the kernel", () => {
      it.live(
        "reports prints, the last value, exceptions in the seed's words, and matplotlib figures as PNG files",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              const printed = yield* runtime.execute(id, "print('a')\nprint('b')\n6 * 7")
              expect(printed.output).toEqual(["a", "b", "42"])
              // NUL, which no store keeps in text, comes out as U+FFFD.
              expect((yield* runtime.execute(id, "print('x\\x00y')")).output).toEqual(["x\uFFFDy"])
              const failed = yield* runtime.execute(id, "1 / 0")
              expect(failed.error).toBe("executing Python code: ZeroDivisionError('division by zero')")
              const plot = yield* runtime.execute(id, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])")
              expect(plot.files.map((f) => [f.name, f.mimeType])).toEqual([["figure-1.png", "image/png"]])
              const png = Option.getOrThrow(yield* runtime.readFile(id, "figure-1.png"))
              expect(Array.from(png.slice(1, 4))).toEqual([0x50, 0x4e, 0x47])
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )

      it.live(
        "loads rows as a DataFrame and reports it with its memory",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              const loaded = yield* runtime.loadDataframe(id, {
                name: "orders",
                columns: ["region", "total"],
                rows: [["EU", "10.5"], ["US", "20"]]
              })
              expect(loaded).toMatchObject({ numRows: 2, numCols: 2 })
              expect(loaded.preview).toContain("EU")
              const sum = yield* runtime.execute(id, "orders['total'].sum()")
              expect(sum.output).toEqual(["30.5"])
              const status = yield* runtime.status(id)
              expect(status.memoryUsageBytes).toBeGreaterThan(0)
              expect(status.dataframes).toEqual([
                expect.objectContaining({
                  name: "orders",
                  numRows: 2,
                  numCols: 2,
                  memoryUsageBytes: expect.any(Number)
                })
              ])
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )

      it.live(
        "loads many rows in batches into one DataFrame, in order, replacing an earlier one of the name",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              yield* runtime.loadDataframe(id, { name: "big", columns: ["n"], rows: [["-1"]] })
              const rows = Array.from({ length: 12_345 }, (_, i) => [String(i), `row ${i}`])
              const loaded = yield* runtime.loadDataframe(id, { name: "big", columns: ["n", "label"], rows })
              expect(loaded).toMatchObject({ numRows: 12_345, numCols: 2 })
              const check = yield* runtime.execute(
                id,
                "(int(big['n'].sum()), big['label'].iloc[-1], list(big.index[:2]))"
              )
              expect(check.output).toEqual([`(${(12_344 * 12_345) / 2}, 'row 12344', [0, 1])`])
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )

      it.live(
        "a kernel that exits is restarted and the crash is reported",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              const crash = yield* runtime.execute(id, "import os\nos._exit(3)")
              expect(crash.error).toContain("exited with code 3")
              expect((yield* runtime.execute(id, "2 + 2")).output).toEqual(["4"])
            })
          ).pipe(Effect.provide(layer)),
        30_000
      )
    })

    describe("limits a sandbox holds", () => {
      it.live(
        "/tmp stops at its size, and the workspace at its quota: over it, nothing runs until files go",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              // 8 MiB into a 4 MiB /tmp: the write fails (ENOSPC), the host keeps its memory.
              const tmp = yield* runtime.exec(id, {
                kind: "bash",
                command: "head -c 8388608 /dev/zero > /tmp/fill; echo $?; stat -c %s /tmp/fill"
              })
              const [status, size] = tmp.stdout.trim().split("\n")
              expect(Number(status)).not.toBe(0)
              expect(Number(size)).toBeLessThanOrEqual(4 * 1024 ** 2)
              // The workspace (32 MiB): five files of 7 MiB fill it; the fifth stops at what remained.
              for (let i = 0; i < 5; i++) {
                yield* runtime.exec(id, { kind: "bash", command: `head -c 7340032 /dev/zero > f${i}` })
              }
              const refused = yield* runtime.exec(id, { kind: "bash", command: "echo ran > ran.txt" })
              expect(refused.error).toMatch(/^the workspace holds \d+ MiB, over its limit of 32 MiB: delete files/)
              expect(yield* runtime.readFile(id, "ran.txt")).toEqual(Option.none())
              const cell = yield* runtime.execute(id, "open('ran.txt', 'w').write('ran')")
              expect(cell.error).toMatch(/over its limit/)
              // Deleting files lets it run again.
              yield* runtime.deleteFile(id, "f0")
              yield* runtime.deleteFile(id, "f1")
              expect((yield* runtime.exec(id, { kind: "bash", command: "echo ok" })).stdout).toBe("ok\n")
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )

      // The review's overshoot: one execution writing many files each under the file-size limit filled
      // a 1 GiB workspace to 3 GiB. As root the workspace is a filesystem sized to the quota.
      it.live.skipIf(!asRoot)(
        `one execution cannot write past the quota, however many files it writes${
          asRoot ? "" : " (skipped: only a server running as root mounts a filesystem per workspace)"
        }`,
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              // Twelve files of 7 MiB (each under the 8 MiB file limit) into a 32 MiB workspace, in one cell.
              const cell = yield* runtime.execute(
                id,
                "import errno\nrefused = None\nfor i in range(12):\n  try:\n" +
                  "    with open(f'big{i}', 'wb') as f: f.write(b'x' * 7340032)\n" +
                  "  except OSError as e:\n    refused = errno.errorcode[e.errno]\n    break\nrefused"
              )
              expect(cell.output?.join("")).toContain("ENOSPC")
              const entries = Option.getOrThrow(yield* runtime.listFiles(id))
              const held = entries.reduce((sum, e) => sum + e.sizeBytes, 0)
              expect(held).toBeGreaterThanOrEqual(32 * 1024 ** 2)
              // The quota and its filesystem's bookkeeping (1/16 and 4 MiB), not 84 MiB.
              expect(held).toBeLessThanOrEqual(32 * 1024 ** 2 + 2 * 1024 ** 2 + 4 * 1024 ** 2)
              expect(entries.map((e) => e.name)).not.toContain("lost+found")
              // Full: the next run is refused until files go, and then runs.
              expect((yield* runtime.exec(id, { kind: "bash", command: "echo ran" })).error).toMatch(/over its limit/)
              for (const e of entries) yield* runtime.deleteFile(id, e.name)
              expect((yield* runtime.exec(id, { kind: "bash", command: "echo ok" })).stdout).toBe("ok\n")
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )

      it.live(
        "what a cell started does not outlive it, even in a session of its own",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              yield* runtime.execute(
                id,
                "import subprocess\nsubprocess.Popen(['sleep', '300'], start_new_session=True)\n" +
                  "subprocess.Popen(['bash', '-c', 'while :; do :; done'], start_new_session=True)"
              )
              const left = yield* runtime.execute(
                id,
                "import os\nsorted(open('/proc/%s/comm' % p).read().strip() for p in os.listdir('/proc') if p.isdigit())"
              )
              const names = left.output?.join("") ?? ""
              expect(names).not.toContain("sleep")
              expect(names).not.toContain("bash")
            })
          ).pipe(Effect.provide(layer)),
        30_000
      )
    })

    describe("a kernel flooding its answer channel", () => {
      it.live(
        "is stopped past the answer cap, said so, and restarted, while the server's event loop keeps turning",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              // Timer ticks while the flood arrives: the loop must not stall scanning what came in.
              let worst = 0
              let last = Date.now()
              const ticker = setInterval(() => {
                const now = Date.now()
                worst = Math.max(worst, now - last)
                last = now
              }, 10)
              const flood = yield* runtime.execute(
                id,
                "import __main__, os\nfd = __main__._answers.fileno()\nfor _ in range(100):\n    os.write(fd, b'x' * (1024 * 1024))"
              ).pipe(Effect.ensuring(Effect.sync(() => clearInterval(ticker))))
              expect(flood.error).toMatch(
                /^the code wrote more than 64 MiB to the kernel's answer channel; the kernel was restarted/
              )
              expect(worst).toBeLessThan(500)
              expect((yield* runtime.execute(id, "2 + 2")).output).toEqual(["4"])
            })
          ).pipe(Effect.provide(layer)),
        60_000
      )
    })

    describe("the files API from the server's side", () => {
      it.live("refuses to follow symlinks that the sandbox planted, for reads, lists, writes and deletes", () =>
        withSandbox((runtime, id) =>
          Effect.gen(function*() {
            const outside = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-outside-"))
            fs.writeFileSync(NodePath.join(outside, "keep.txt"), "host file")
            fs.chmodSync(outside, 0o755)
            yield* runtime.exec(id, {
              kind: "bash",
              command: `ln -s /etc/passwd passwd && ln -s ${JSON.stringify(outside)} out && ln -s / rootdir`
            })
            expect(yield* runtime.readFile(id, "passwd")).toEqual(Option.none())
            expect(yield* runtime.listFiles(id, "rootdir")).toEqual(Option.none())
            expect(yield* runtime.readFile(id, "out/keep.txt")).toEqual(Option.none())
            const write = yield* Effect.flip(runtime.writeFile(id, "out/new.txt", bytes("x")))
            expect(write._tag).toBe("InvalidRequest")
            expect(fs.existsSync(NodePath.join(outside, "new.txt"))).toBe(false)
            expect(yield* runtime.deleteFile(id, "out/keep.txt")).toBe(false)
            // Deleting the link removes the link, never what it points at.
            expect(yield* runtime.deleteFile(id, "out")).toBe(true)
            expect(fs.readFileSync(NodePath.join(outside, "keep.txt"), "utf8")).toBe("host file")
            const listed = Option.getOrThrow(yield* runtime.listFiles(id))
            expect(listed.map((e) => e.name)).toEqual(["library"])
            expect(text(Option.getOrThrow(yield* runtime.readFile(id, "library/sales/q1.sql")))).toBe("select 1")
          })
        ).pipe(Effect.provide(layer)))

      it.live(
        "FIFOs at the root and below are never opened blocking: reads and walks return at once",
        () =>
          withSandbox((runtime, id) =>
            Effect.gen(function*() {
              yield* runtime.exec(id, {
                kind: "bash",
                command: "mkfifo a b && mkdir -p library/sub && mkfifo c library/sub/d"
              })
              const started = Date.now()
              // Four at once: blocking opens would take four of libuv's threads, then hang the rest.
              const reads = yield* Effect.all(
                ["a", "b", "c", "library/sub/d"].map((path) => runtime.readFile(id, path)),
                { concurrency: "unbounded" }
              )
              expect(reads).toEqual([Option.none(), Option.none(), Option.none(), Option.none()])
              // The library's walk (what filing a change reads) skips them too.
              const listed = Option.getOrThrow(yield* runtime.listFiles(id, "library/sub"))
              expect(listed).toEqual([])
              expect(Date.now() - started).toBeLessThan(5_000)
              // libuv's pool is free: a file operation of the server still answers.
              expect((yield* Effect.promise(() => fs.promises.stat(os.tmpdir()))).isDirectory()).toBe(true)
            })
          ).pipe(Effect.provide(layer)),
        30_000
      )
    })
  }
)

describe("BubblewrapRuntime without bubblewrap", () => {
  it.effect("says what to install instead of running anything", () =>
    Effect.gen(function*() {
      const reason = Option.getOrThrow(BubblewrapRuntime.availability("/nonexistent/python3"))
      expect(reason).toContain("apt-get install -y bubblewrap python3-pandas python3-matplotlib")
      const runtime = yield* SandboxRuntime
      const start = yield* Effect.flip(runtime.start({
        sandboxId: SandboxId.make(randomUUID()),
        organizationId: OrganizationId.make(randomUUID()),
        libraryFiles: HashMap.empty()
      }))
      expect(start.message).toContain("python3-pandas")
    }).pipe(Effect.provide(BubblewrapRuntime.layerOrUnavailable({ directory, python: "/nonexistent/python3" }))))
})

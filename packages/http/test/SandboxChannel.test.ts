import { describe, expect, it } from "@effect/vitest"
import { OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as SandboxRunners from "@sightline/core/SandboxRunners"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:net"
import * as SandboxChannel from "../src/SandboxChannel.js"
import { describeServer } from "./utils/server.js"

const secret = Redacted.make("a deployment's channel secret, shared by its processes")

/** The runtime of the server at `url`, as another process reaches it with `key`. */
const remote = <A, E>(
  url: string,
  key: Redacted.Redacted<string>,
  f: (runtime: ReturnType<SandboxRunners.SandboxChannel["Type"]["connect"]>) => Effect.Effect<A, E>
) =>
  Effect.flatMap(SandboxRunners.SandboxChannel, (channel) => f(channel.connect(url))).pipe(
    Effect.provide(SandboxChannel.layerClient(key))
  )

/** A loopback port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

describe("SandboxChannel tokens", () => {
  it("accepts the secret's token of this very request, made in the last 30 seconds, and nothing else", () => {
    const now = Date.now()
    const request = { method: "POST", path: SandboxChannel.path, body: new Uint8Array([1, 2, 3]) }
    const token = (at: number, of = request) => SandboxChannel.token(secret, of, at)
    expect(SandboxChannel.verify(secret, token(now), request, now)).toBe(true)
    expect(SandboxChannel.verify(secret, token(now - 20_000), request, now)).toBe(true)
    expect(SandboxChannel.verify(secret, token(now + 2_000), request, now)).toBe(true)
    expect(SandboxChannel.verify(secret, token(now - 31_000), request, now)).toBe(false)
    // Dated ahead past the clocks' drift: a token kept for later.
    expect(SandboxChannel.verify(secret, token(now + 60_000), request, now)).toBe(false)
    expect(SandboxChannel.verify(secret, SandboxChannel.token(Redacted.make("another"), request, now), request, now))
      .toBe(false)
    expect(SandboxChannel.verify(secret, undefined, request, now)).toBe(false)
    expect(SandboxChannel.verify(secret, "Bearer sk_live_whatever", request, now)).toBe(false)
    // A token of one request does not pass for another body, path or method, nor for another time.
    for (
      const other of [
        { ...request, body: new Uint8Array([1, 2, 4]) },
        { ...request, path: "/internal/other" },
        { ...request, method: "PUT" }
      ]
    ) expect(SandboxChannel.verify(secret, token(now), other, now)).toBe(false)
    const forged = token(now).replace(`t=${now}`, `t=${now + 1}`)
    expect(SandboxChannel.verify(secret, forged, request, now)).toBe(false)
  })
})

describeServer("SandboxChannel over a socket", (server) => {
  const sandboxId = SandboxId.make("5b0e3f3e-8c1b-4a53-9b8e-0f6f2a1c9d01")
  const organizationId = OrganizationId.make("8c7d1e0a-2b3c-4d5e-8f90-a1b2c3d4e5f6")

  it.effect("serves the runtime to a process holding the secret: start, code, files as bytes, status, stop", () =>
    remote(server().baseUrl, secret, (runtime) =>
      Effect.gen(function*() {
        const library = HashMap.make(["semantic/demo.yaml", new TextEncoder().encode("name: demo\n")])
        yield* runtime.start({ sandboxId, organizationId, libraryFiles: library })
        // Starting it twice is the runtime's own Conflict, carried across.
        expect((yield* Effect.flip(runtime.start({ sandboxId, organizationId, libraryFiles: library })))._tag)
          .toBe("Conflict")
        const executed = yield* runtime.execute(sandboxId, "print(1)")
        expect(executed.executionTimeMs).toBeGreaterThanOrEqual(0)
        // Every byte value, NUL included, arrives as it was written.
        const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
        yield* runtime.writeFile(sandboxId, "out/all.bin", bytes)
        expect(Option.map(yield* runtime.readFile(sandboxId, "out/all.bin"), Array.from)).toEqual(
          Option.some(Array.from(bytes))
        )
        const entries = Option.getOrThrow(yield* runtime.listFiles(sandboxId, "out"))
        expect(entries.map((entry) => [entry.name, entry.sizeBytes])).toEqual([["all.bin", 256]])
        // A path the runtime refuses is its InvalidRequest, not a transport failure.
        expect((yield* Effect.flip(runtime.readFile(sandboxId, "../etc/passwd")))._tag).toBe("InvalidRequest")
        yield* runtime.writeFile(sandboxId, "library/semantic/demo.yaml", new TextEncoder().encode("name: edited\n"))
        expect((yield* runtime.libraryChanges(sandboxId)).map((c) => [c.path, c.status])).toEqual([
          ["semantic/demo.yaml", "modified"]
        ])
        const loaded = yield* runtime.loadDataframe(sandboxId, { name: "df", columns: ["a"], rows: [[1], [2]] })
        expect(loaded.numRows).toBe(2)
        expect((yield* runtime.status(sandboxId)).status).toBe("running")
        yield* runtime.stop(sandboxId)
        expect((yield* runtime.status(sandboxId)).status).toBe("stopped")
        const gone = yield* Effect.flip(runtime.execute(sandboxId, "print(1)"))
        expect(gone._tag).toBe("SandboxNotRunning")
      })))

  it.effect("refuses another secret, a member's key, and no credential at all", () =>
    Effect.gen(function*() {
      const wrong = yield* Effect.flip(
        remote(server().baseUrl, Redacted.make("not the secret"), (runtime) => runtime.execute(sandboxId, "1"))
      )
      expect(wrong).toMatchObject({ _tag: "SandboxNotRunning" })
      expect(wrong.message).toContain("cannot be reached")
      const org = yield* Effect.promise(() => server().newOrg())
      // A token the secret made for another request's body (a captured one, replayed on another call).
      const captured = SandboxChannel.token(secret, {
        method: "POST",
        path: SandboxChannel.path,
        body: new Uint8Array([0x91, 0x01])
      })
      for (const authorization of [`Bearer ${org.key}`, undefined, captured]) {
        const response = yield* Effect.promise(() =>
          fetch(`${server().baseUrl}${SandboxChannel.path}`, {
            method: "POST",
            headers: {
              "content-type": "application/msgpack",
              ...(authorization === undefined ? {} : { authorization })
            },
            body: new Uint8Array([0x90])
          })
        )
        expect(response.status).toBe(401)
      }
    }))

  it.effect("reads a process it cannot reach as not running, saying so, and as stopped", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      yield* remote(`http://127.0.0.1:${port}`, secret, (runtime) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(runtime.execute(sandboxId, "print(1)"))
          expect(error._tag).toBe("SandboxNotRunning")
          expect(error.message).toContain("runs on a server process that cannot be reached now")
          expect((yield* runtime.status(sandboxId)).status).toBe("stopped")
          expect((yield* Effect.flip(runtime.start({ sandboxId, organizationId, libraryFiles: HashMap.empty() })))._tag)
            .toBe("Conflict")
          yield* runtime.stop(sandboxId)
        }))
    }))
}, { sandboxChannel: secret })

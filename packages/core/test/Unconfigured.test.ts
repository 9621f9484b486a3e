import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Delivery from "../src/Delivery.js"
import { OrganizationId, SandboxId } from "../src/Ids.js"
import * as SandboxRuntime from "../src/SandboxRuntime.js"

it.effect("an unconfigured delivery fails every distinct target, saying why", () =>
  Effect.gen(function*() {
    const results = yield* (yield* Delivery.Delivery).deliver({
      organizationId: OrganizationId.make(crypto.randomUUID()),
      subject: "s",
      html: "<p>h</p>",
      text: "t",
      targets: { emails: ["a@x.test", "A@x.test", "b@x.test"], chatChannelId: "C1" }
    })
    expect(results.map((r) => r._tag)).toEqual(["Failed", "Failed", "Failed"])
    expect(results.every((r) => r._tag === "Failed" && r.reason === Delivery.unconfiguredReason)).toBe(true)
  }).pipe(Effect.provide(Delivery.layerUnconfigured)))

it.effect("an unconfigured sandbox runtime starts nothing, runs nothing, and says so", () =>
  Effect.gen(function*() {
    const runtime = yield* SandboxRuntime.SandboxRuntime
    const sandboxId = SandboxId.make(crypto.randomUUID())
    const start = yield* Effect.flip(
      runtime.start({
        sandboxId,
        organizationId: OrganizationId.make(crypto.randomUUID()),
        libraryFiles: HashMap.empty()
      })
    )
    expect(start.message).toBe(SandboxRuntime.unconfiguredMessage)
    const execute = yield* Effect.flip(runtime.execute(sandboxId, "1 + 1"))
    expect(execute).toMatchObject({ _tag: "SandboxNotRunning", message: SandboxRuntime.unconfiguredMessage })
    expect(yield* runtime.status(sandboxId)).toEqual({ status: "stopped", dataframes: [] })
  }).pipe(Effect.provide(SandboxRuntime.layerUnconfigured)))

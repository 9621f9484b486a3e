/**
 * The test harness of `@sightline/http` itself: `Server.layer` on a real socket (127.0.0.1, a free
 * port) over core's use cases and core's in-memory ports. It tests what this package decides (routes,
 * the envelope, authentication, CORS, rate-limit headers, the typed client), apart from any store;
 * the standalone server's tests cover the same routes over PGlite and PostgreSQL.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import * as LanguageModel from "@sightline/core/LanguageModel"
import { Memory } from "@sightline/core/testing"
import * as UseCases from "@sightline/core/UseCases"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import * as AssetUrls from "../../src/AssetUrls.js"
import * as Jwt from "../../src/Jwt.js"
import * as RateLimit from "../../src/RateLimit.js"
import * as SandboxChannel from "../../src/SandboxChannel.js"
import * as Server from "../../src/Server.js"
import * as Harness from "../../src/TestServer.js"

/** What a test server is built with. */
export interface Options {
  readonly jwt?: Jwt.Options
  readonly corsOrigins?: ReadonlyArray<string>
  readonly rateLimitPerMinute?: number
  /** Serves the sandbox channel (of the memory runtime) to the holders of this secret. */
  readonly sandboxChannel?: Redacted.Redacted<string>
  /** Log lines kept here (message and annotations), from `level` up; by default only errors, dropped. */
  readonly logs?: { readonly lines: Array<LogLine>; readonly level: LogLevel.LogLevel }
}

/** A log line as a test keeps it. */
export interface LogLine {
  readonly level: string
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

const loggerLayer = (options: Options) => {
  const logs = options.logs
  if (logs === undefined) return Logger.minimumLogLevel(LogLevel.Error)
  const keep = Logger.make(({ annotations, logLevel, message }) => {
    logs.lines.push({
      level: logLevel.label,
      message: Array.isArray(message) && message.length === 1 ? message[0] : message,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return Layer.merge(Logger.replace(Logger.defaultLogger, keep), Logger.minimumLogLevel(logs.level))
}

const serverLayer = (options: Options) =>
  Server.layerServe.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Server.layer,
        Server.layerCors(options.corsOrigins ?? []),
        options.sandboxChannel === undefined ? Layer.empty : SandboxChannel.layerServer(options.sandboxChannel)
      ).pipe(
        Layer.provide(Server.layerReadinessAlways),
        Layer.provide(RateLimit.layer(RateLimit.perMinute(options.rateLimitPerMinute ?? RateLimit.defaultPerMinute))),
        Layer.provide(options.jwt === undefined ? Layer.empty : Jwt.layer(options.jwt)),
        Layer.provide(AssetUrls.layerEphemeral)
      )
    ),
    Layer.provideMerge(UseCases.layer),
    // No model answers and no connector holds data here: these tests never ask a question.
    Layer.provideMerge(Layer.mergeAll(Memory.layer, LanguageModel.layerMemory([]), ConnectorRuntime.layerMemory([]))),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(loggerLayer(options))
  )

/** Every service a test can reach through `run`. */
export type ServerServices = Layer.Layer.Success<ReturnType<typeof serverLayer>>

/** A new organization with its admin member and an admin API key. */
export type Org = Harness.Org

/** A running server. */
export type TestServer = Harness.TestServer<ServerServices>

/** Starts a server; `stop` it afterwards. */
export const startServer = (options: Options = {}): Promise<TestServer> => Harness.start(serverLayer(options))

/** Registers `suite` with its own server, started before the block's tests and stopped after. */
export const describeServer = (title: string, suite: (server: () => TestServer) => void, options: Options = {}) =>
  describe(title, () => {
    let current: TestServer | undefined
    beforeAll(async () => {
      current = await startServer(options)
    })
    afterAll(async () => {
      await current?.stop()
    })
    suite(() => {
      if (current === undefined) throw new Error("the server is not started")
      return current
    })
  })

export const body = Harness.body

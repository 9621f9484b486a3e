/**
 * The sandbox channel between the processes of a deployment: `POST /internal/sandboxes` serves this
 * process's sandbox runtime to the others (an `@effect/rpc` group over HTTP, in MessagePack, which
 * carries file bytes as they are), and `layerClient` is core's `SandboxChannel` over it.
 *
 * The channel is the operator's, never a tenant's: every request carries a token derived from the
 * deployment's channel secret, an HMAC of the time and of the request itself (its method, path and
 * body, which names the call and the sandbox), good for 30 seconds and never dated ahead, compared
 * in constant time. It is not encryption: between hosts, run the channel over TLS or a private
 * network (`docs/deploy.md`).
 * A member's key or session does not open it, and a process without the secret does not serve it.
 * Calls that cannot reach the other process read as `SandboxNotRunning` saying so.
 *
 * @since 0.1.0
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcClientError from "@effect/rpc/RpcClientError"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import { Conflict, InvalidRequest } from "@sightline/core/Errors"
import { OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as SandboxRunners from "@sightline/core/SandboxRunners"
import * as Runtime from "@sightline/core/SandboxRuntime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as RedactedValue from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as NodeCrypto from "node:crypto"
import { Surfaces } from "./Surfaces.js"

/**
 * The path of the channel on every process that runs sandboxes.
 *
 * @since 0.1.0
 * @category constants
 */
export const path = "/internal/sandboxes"

/**
 * Whether a request is for the channel (it answers in its own protocol, outside the /v2 envelope).
 *
 * @since 0.1.0
 * @category guards
 */
export const isChannelPath = (url: string): boolean => url === path || url.startsWith(`${path}?`)

/**
 * The largest request the channel takes: a library mounted whole, or a file written (1 GiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBodyBytes = 1024 ** 3

const sandboxId = SandboxId
const LibraryFiles = Schema.Array(Schema.Tuple(Schema.String, Schema.Uint8ArrayFromSelf))
const FileError = Schema.Union(Runtime.SandboxNotRunning, InvalidRequest)

/**
 * The operations of core's `SandboxRuntime` as remote procedures.
 *
 * @since 0.1.0
 * @category rpcs
 */
export class SandboxRpcs extends RpcGroup.make(
  Rpc.make("Start", {
    payload: { sandboxId, organizationId: OrganizationId, libraryFiles: LibraryFiles },
    error: Conflict
  }),
  Rpc.make("Execute", {
    payload: { sandboxId, code: Schema.String },
    success: Runtime.ExecuteResult,
    error: Runtime.SandboxNotRunning
  }),
  Rpc.make("LoadDataframe", {
    payload: {
      sandboxId,
      name: Schema.String,
      columns: Schema.Array(Schema.String),
      rows: Schema.Array(Schema.Array(Schema.Unknown))
    },
    success: Runtime.LoadResult,
    error: Runtime.SandboxNotRunning
  }),
  Rpc.make("Exec", {
    payload: {
      sandboxId,
      command: Schema.String,
      kind: Runtime.ExecKind,
      env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
    },
    success: Runtime.ExecResult,
    error: Runtime.SandboxNotRunning
  }),
  Rpc.make("ListFiles", {
    payload: { sandboxId, path: Schema.optional(Schema.String) },
    success: Schema.Option(Schema.Array(Runtime.FileEntry)),
    error: FileError
  }),
  Rpc.make("ReadFile", {
    payload: { sandboxId, path: Schema.String },
    success: Schema.Option(Schema.Uint8ArrayFromSelf),
    error: FileError
  }),
  Rpc.make("WriteFile", {
    payload: { sandboxId, path: Schema.String, bytes: Schema.Uint8ArrayFromSelf },
    error: FileError
  }),
  Rpc.make("DeleteFile", { payload: { sandboxId, path: Schema.String }, success: Schema.Boolean, error: FileError }),
  Rpc.make("LibraryChanges", {
    payload: { sandboxId },
    success: Schema.Array(Runtime.LibraryChange),
    error: Runtime.SandboxNotRunning
  }),
  Rpc.make("MountLibrary", { payload: { sandboxId, libraryFiles: LibraryFiles }, error: Runtime.SandboxNotRunning }),
  Rpc.make("Stop", { payload: { sandboxId } }),
  Rpc.make("Status", { payload: { sandboxId }, success: Runtime.SandboxStatus })
) {}

const tokenScheme = "Sightline-Channel"
// A call is signed as it is sent: the time it may be received in is short, and never ahead of the
// receiver's clock by more than processes' clocks drift apart.
const tokenLifetimeMillis = 30_000
const clockSkewMillis = 5_000

/**
 * What a channel token signs: the request's method, path and body (the call and its sandbox are
 * in the body), so a token works for its own request only.
 *
 * @since 0.1.0
 * @category models
 */
export interface Signed {
  readonly method: string
  readonly path: string
  readonly body: Uint8Array
}

const signature = (secret: Redacted.Redacted<string>, at: string, request: Signed): string =>
  NodeCrypto.createHmac("sha256", RedactedValue.value(secret))
    .update(
      `sightline-sandbox-channel.v2\n${at}\n${request.method.toUpperCase()}\n${request.path}\n${
        NodeCrypto.createHash("sha256").update(request.body).digest("base64url")
      }`
    )
    .digest("base64url")

/**
 * The `Authorization` value of a channel request sent now.
 *
 * @since 0.1.0
 * @category utils
 */
export const token = (secret: Redacted.Redacted<string>, request: Signed, now: number = Date.now()): string =>
  `${tokenScheme} t=${now},v2=${signature(secret, String(now), request)}`

/**
 * Whether an `Authorization` value is this secret's token of this very request, made in the last
 * 30 seconds (and not more than 5 seconds ahead of this process's clock).
 *
 * @since 0.1.0
 * @category utils
 */
export const verify = (
  secret: Redacted.Redacted<string>,
  authorization: string | undefined,
  request: Signed,
  now: number = Date.now()
): boolean => {
  const match = /^Sightline-Channel t=(\d{1,16}),v2=([\w-]{43})$/.exec(authorization ?? "")
  if (match === null) return false
  const [, at, given] = match
  const age = now - Number(at)
  if (age > tokenLifetimeMillis || age < -clockSkewMillis) return false
  return NodeCrypto.timingSafeEqual(Buffer.from(given!), Buffer.from(signature(secret, at!, request)))
}

const refused = HttpServerResponse.unsafeJson(
  { error: { code: "unauthenticated", message: "the sandbox channel takes only its deployment's channel token" } },
  { status: 401 }
)

/**
 * Serves this process's `SandboxRuntime` at `path` to the processes that hold `secret`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServer = (
  secret: Redacted.Redacted<string>
): Layer.Layer<never, never, Runtime.SandboxRuntime> =>
  Surfaces.use((router) =>
    Effect.gen(function*() {
      const runtime = yield* Runtime.SandboxRuntime
      const handlers = SandboxRpcs.toLayer({
        Start: ({ libraryFiles, organizationId, sandboxId }) =>
          runtime.start({ sandboxId, organizationId, libraryFiles: HashMap.fromIterable(libraryFiles) }),
        Execute: ({ code, sandboxId }) => runtime.execute(sandboxId, code),
        LoadDataframe: ({ columns, name, rows, sandboxId }) =>
          runtime.loadDataframe(sandboxId, { name, columns, rows }),
        Exec: ({ command, env, kind, sandboxId }) => runtime.exec(sandboxId, { command, kind, env }),
        ListFiles: ({ path, sandboxId }) => runtime.listFiles(sandboxId, path),
        ReadFile: ({ path, sandboxId }) => runtime.readFile(sandboxId, path),
        WriteFile: ({ bytes, path, sandboxId }) => runtime.writeFile(sandboxId, path, bytes),
        DeleteFile: ({ path, sandboxId }) => runtime.deleteFile(sandboxId, path),
        LibraryChanges: ({ sandboxId }) => runtime.libraryChanges(sandboxId),
        MountLibrary: ({ libraryFiles, sandboxId }) =>
          runtime.mountLibrary(sandboxId, HashMap.fromIterable(libraryFiles)),
        Stop: ({ sandboxId }) => runtime.stop(sandboxId),
        Status: ({ sandboxId }) => runtime.status(sandboxId)
      })
      const app = yield* RpcServer.toHttpApp(SandboxRpcs, { disableTracing: true }).pipe(
        Effect.provide(Layer.merge(handlers, RpcSerialization.layerMsgPack))
      )
      // The body is read (within its limit) to check the token; the protocol then reads the same
      // bytes, from a request made of them (a Node request's body can be read once).
      yield* router.post(
        path,
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          request.arrayBuffer.pipe(
            HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)),
            Effect.flatMap((body) => {
              const signed = { method: request.method, path: request.url.split("?")[0]!, body: new Uint8Array(body) }
              if (!verify(secret, request.headers["authorization"], signed)) return Effect.succeed(refused)
              const replayed = HttpServerRequest.fromWeb(
                new Request(`http://channel${signed.path}`, {
                  method: request.method,
                  headers: request.headers,
                  body: signed.body
                })
              )
              return Effect.provideService(app, HttpServerRequest.HttpServerRequest, replayed)
            })
          ))
      )
    })
  )

type Client = RpcClient.RpcClient<RpcGroup.Rpcs<typeof SandboxRpcs>, RpcClientError.RpcClientError>

const toFiles = (files: Runtime.LibraryFiles) => Array.from(HashMap.toEntries(files))

/**
 * Core's `SandboxChannel` over HTTP: one client per runner address, made on first use and kept for
 * the layer's life, each request signed with `secret`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  secret: Redacted.Redacted<string>
): Layer.Layer<SandboxRunners.SandboxChannel> =>
  Layer.scoped(
    SandboxRunners.SandboxChannel,
    Effect.gen(function*() {
      // Signed afresh for every request; an answer that is no success (a refused token) fails the
      // call, where the protocol would otherwise wait for responses that never come.
      // (The protocol turns every failure of its client into an `RpcClientError`, whatever its type.)
      const signed = <E, R>(client: HttpClient.HttpClient.With<E, R>) =>
        client.pipe(
          HttpClient.mapRequest((request) =>
            HttpClientRequest.setHeader(
              request,
              "authorization",
              token(secret, {
                method: request.method,
                path: new URL(request.url).pathname,
                body: request.body._tag === "Uint8Array" ? request.body.body : new Uint8Array()
              })
            )
          ),
          HttpClient.filterStatusOk
        ) as HttpClient.HttpClient.With<E, R>
      // One client per runner, made on first use in the layer's scope.
      const clientOf = yield* Effect.cachedFunction((url: string) =>
        RpcClient.make(SandboxRpcs).pipe(
          Effect.provide(
            RpcClient.layerProtocolHttp({ url: `${url.replace(/\/+$/, "")}${path}`, transformClient: signed }).pipe(
              Layer.provide(Layer.merge(FetchHttpClient.layer, RpcSerialization.layerMsgPack))
            )
          )
        )
      )
      const scope = yield* Effect.scope

      return SandboxRunners.SandboxChannel.of({
        connect: (url) => {
          const unreachable = (sandboxId: SandboxId, reason: string) =>
            new Runtime.SandboxNotRunning({
              sandboxId,
              message:
                `sandbox ${sandboxId} runs on a server process that cannot be reached now (${reason}); try again shortly, or restart it with POST /v2/sandcastles {"sandbox_id": "${sandboxId}"}`
            })
          // Transport failures (the process is gone or out of reach) read as "not running", saying so.
          const call = <A, E>(
            sandboxId: SandboxId,
            f: (client: Client) => Effect.Effect<A, E | RpcClientError.RpcClientError>
          ): Effect.Effect<A, Exclude<E, RpcClientError.RpcClientError> | Runtime.SandboxNotRunning> =>
            Effect.flatMap(Scope.extend(clientOf(url), scope), f).pipe(
              Effect.catchIf(
                (e): e is RpcClientError.RpcClientError => e instanceof RpcClientError.RpcClientError,
                (e) => Effect.fail(unreachable(sandboxId, e.message))
              )
            ) as Effect.Effect<A, Exclude<E, RpcClientError.RpcClientError> | Runtime.SandboxNotRunning>
          return {
            available: true,
            start: (options) =>
              Effect.mapError(
                call(options.sandboxId, (client) =>
                  client.Start({
                    sandboxId: options.sandboxId,
                    organizationId: options.organizationId,
                    libraryFiles: toFiles(options.libraryFiles)
                  })),
                (e) => e instanceof Runtime.SandboxNotRunning ? new Conflict({ message: e.message }) : e
              ),
            execute: (sandboxId, code) => call(sandboxId, (client) => client.Execute({ sandboxId, code })),
            loadDataframe: (sandboxId, rows) =>
              call(sandboxId, (client) =>
                client.LoadDataframe({ sandboxId, name: rows.name, columns: rows.columns, rows: rows.rows })),
            exec: (sandboxId, options) =>
              call(sandboxId, (client) =>
                client.Exec({
                  sandboxId,
                  command: options.command,
                  kind: options.kind,
                  ...(options.env === undefined ? {} : { env: options.env })
                })),
            listFiles: (sandboxId, path) =>
              call(sandboxId, (client) =>
                client.ListFiles({ sandboxId, ...(path === undefined ? {} : { path }) })),
            readFile: (sandboxId, path) => call(sandboxId, (client) => client.ReadFile({ sandboxId, path })),
            writeFile: (sandboxId, path, bytes) =>
              call(sandboxId, (client) => client.WriteFile({ sandboxId, path, bytes })),
            deleteFile: (sandboxId, path) => call(sandboxId, (client) => client.DeleteFile({ sandboxId, path })),
            libraryChanges: (sandboxId) => call(sandboxId, (client) => client.LibraryChanges({ sandboxId })),
            mountLibrary: (sandboxId, files) =>
              call(sandboxId, (client) => client.MountLibrary({ sandboxId, libraryFiles: toFiles(files) })),
            // A runner out of reach holds nothing to stop that anyone could reach; its drain stops them.
            stop: (sandboxId) => Effect.ignore(call(sandboxId, (client) => client.Stop({ sandboxId }))),
            status: (sandboxId) =>
              call(sandboxId, (client) => client.Status({ sandboxId })).pipe(
                Effect.orElseSucceed(() => ({ status: "stopped" as const, dataframes: [] }))
              )
          }
        }
      })
    })
  )

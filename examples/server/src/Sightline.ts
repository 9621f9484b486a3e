/**
 * The standalone deployment assembled from layers: the SQL store (embedded PGlite in a data
 * directory, or PostgreSQL when `DATABASE_URL` is set), the configured model providers (the offline
 * model at least), the live data connectors, core's use cases over them, and the HTTP application
 * of `@sightline/http`.
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Providers from "@sightline/ai/Providers"
import * as DemoModel from "@sightline/connectors/DemoModel"
import * as FilesConnector from "@sightline/connectors/FilesConnector"
import * as ConnectorsRuntime from "@sightline/connectors/Runtime"
import * as Searxng from "@sightline/connectors/Searxng"
import * as ConnectorsTester from "@sightline/connectors/Tester"
import * as ConsoleAssets from "@sightline/console/ConsoleAssets"
import * as Answers from "@sightline/core/Answers"
import * as ChatEventBus from "@sightline/core/ChatEventBus"
import type * as ConnectorFiles from "@sightline/core/ConnectorFiles"
import * as IdGenerator from "@sightline/core/IdGenerator"
import * as Metrics from "@sightline/core/Metrics"
import type * as Organizations from "@sightline/core/Organizations"
import * as PlaybookRuns from "@sightline/core/PlaybookRuns"
import * as SandboxRunners from "@sightline/core/SandboxRunners"
import * as SandboxRuntime from "@sightline/core/SandboxRuntime"
import * as UseCases from "@sightline/core/UseCases"
import * as Worker from "@sightline/core/Worker"
import * as ClientDocuments from "@sightline/delivery/ClientDocuments"
import * as EventWebhook from "@sightline/delivery/EventWebhook"
import * as Transport from "@sightline/delivery/Transport"
import * as VegaCharts from "@sightline/delivery/VegaCharts"
import * as AssetUrls from "@sightline/http/AssetUrls"
import * as ClientAddress from "@sightline/http/ClientAddress"
import * as HttpMetrics from "@sightline/http/HttpMetrics"
import * as Jwt from "@sightline/http/Jwt"
import * as McpOAuth from "@sightline/http/McpOAuth"
import * as Oidc from "@sightline/http/Oidc"
import * as Passwords from "@sightline/http/Passwords"
import * as PublicUrl from "@sightline/http/PublicUrl"
import * as RateLimit from "@sightline/http/RateLimit"
import * as SandboxChannel from "@sightline/http/SandboxChannel"
import * as Secrets from "@sightline/http/Secrets"
import * as Server from "@sightline/http/Server"
import * as BubblewrapRuntime from "@sightline/sandbox/BubblewrapRuntime"
import * as ChatEventBusPg from "@sightline/sql/ChatEventBusPg"
import * as PgliteClient from "@sightline/sql/PgliteClient"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as SqlStore from "@sightline/sql/SqlStore"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as NodeHttp from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { Duplex } from "node:stream"
import * as Telemetry from "./Telemetry.js"

/**
 * Where the data lives. Without a `dataDir`, PGlite (real PostgreSQL) runs in memory and nothing
 * outlives the process: for tests and throwaway hosts; the CLI always passes `SIGHTLINE_DATA_DIR`.
 */
export type Store =
  | {
    readonly _tag: "Pglite"
    readonly dataDir?: string | undefined
    /** A prepared cluster a new data directory, or memory, starts from (see `PgliteClient.dumpTemplate`). */
    readonly template?: string | undefined
  }
  | { readonly _tag: "Postgres"; readonly url: string | Redacted.Redacted }

/**
 * What a process does: `api` serves the HTTP API and the console (and answers chats), `worker` runs
 * the background worker, `sandbox` runs sandboxes.
 */
export type Role = "api" | "worker" | "sandbox"

/** What the standalone server is made of. */
export interface Options {
  readonly store: Store
  /** What this process does (all three when absent); health, readiness and metrics are always served. */
  readonly roles?: ReadonlyArray<Role> | undefined
  /**
   * The processes of a deployment reach each other's sandboxes through the sandbox channel, signed
   * with `secret`; this process's is at `url`. Absent: each process reaches only its own sandboxes.
   */
  readonly cluster?: {
    readonly secret: Redacted.Redacted<string>
    readonly url: string
    /** How often a runner says it is alive (10 s when absent). */
    readonly heartbeatMillis?: number | undefined
  } | undefined
  /** The table prefix (default `sightline_`). */
  readonly prefix?: string | undefined
  /** Requests a minute per organization (default 600). */
  readonly rateLimitPerMinute?: number | undefined
  /** JWT verification; API keys only when absent. */
  readonly jwt?: Jwt.Options | undefined
  /** The key of signed asset URLs; a random one per process when absent (URLs then die with it). */
  readonly assetSecret?: Redacted.Redacted<string> | undefined
  /** The model providers and catalogue (the offline model only when absent). */
  readonly models?: Providers.Options | undefined
  /**
   * Where the DEMO connector's database is kept once built (see `ConnectorsRuntime.Options.demoCache`);
   * every process builds it on first use when absent.
   */
  readonly demoCache?: string | undefined
  /**
   * FILES connectors: where this process keeps its copies of their databases (the store holds the
   * durable one), and the sizes it takes. A directory under the system's temporary one when absent.
   */
  readonly files?: {
    readonly cacheDirectory?: string | undefined
    readonly limits?: ConnectorFiles.Limits | undefined
    /** The memory their open databases may take together (2 GiB when absent). */
    readonly memoryBytes?: number | undefined
  } | undefined
  /** A SearXNG instance for the agent's `web_search` (not offered when absent). */
  readonly searxngUrl?: string | undefined
  /** Browser origins allowed to call the API (CORS); none when absent. */
  readonly corsOrigins?: ReadonlyArray<string> | undefined
  /** Sign-in through an OpenID Provider; passwords only when absent. */
  readonly oidc?: Oidc.Options | undefined
  /** Where people reach the server (the base of sign-in links); `http://localhost` when absent. */
  readonly publicUrl?: string | undefined
  /**
   * Reverse proxies (addresses and CIDR ranges) whose `X-Forwarded-For` names the client, for the
   * limits counted per client address; none when absent (the socket's peer is the client).
   */
  readonly trustedProxies?: ReadonlyArray<string> | undefined
  /** E-mail delivery of reports; every e-mail target fails saying so when absent. */
  readonly smtp?: { readonly url: Redacted.Redacted<string>; readonly from: string } | undefined
  /**
   * What POSTGRES and MYSQL connectors may reach and log in as beyond the public internet and
   * non-superuser roles (the defaults, see `ConnectorsRuntime.defaultAccess`).
   */
  readonly connectorAccess?: ConnectorsRuntime.ConnectorAccess | undefined
  /** Lets chat-channel webhooks and webhook endpoints be plain http and private or loopback addresses (development, tests). */
  readonly webhookAllowPrivate?: boolean | undefined
  /** The bearer token of `GET /metrics` (Prometheus text); without one the route is not served. */
  readonly metricsToken?: Redacted.Redacted<string> | undefined
  /** Export traces over OTLP (from the `OTEL_*` variables); none when absent. */
  readonly telemetry?: Telemetry.Options | undefined
  /** Agents may connect to `/mcp` with a member's sign-in (OAuth 2.1); keys work either way. */
  readonly mcpOAuth?: boolean | undefined
  /**
   * The files a new organization's library starts with: the DEMO dataset's semantic model
   * (`semantic/demo.yaml`) unless given (`[]` for an empty library).
   */
  readonly starterLibrary?: ReadonlyArray<Organizations.StarterFile> | undefined
  /** How long `POST /v2/playbooks/{id}/run` waits for the report before answering 504 (default 120 s). */
  readonly playbookRunTimeoutMillis?: number | undefined
  /**
   * How chat runs show they are alive: a heartbeat every `heartbeatMillis` (5 s), a run without one
   * for `staleRunAfterMillis` (60 s) is ended as failed, and an idle follower looks again every
   * `followIdleCheckMillis` (2 s). Shorter in tests.
   */
  readonly liveness?: {
    readonly heartbeatMillis: number
    readonly staleRunAfterMillis: number
    readonly followIdleCheckMillis?: number | undefined
  } | undefined
  /**
   * Sandboxes (bubblewrap): where their workspaces live, the wall-clock limit of one execution, and
   * how many may run at once on this process per member and per organization (see
   * `Sandboxes.defaultOptions`). Absent or `false`: none start, saying so; where bubblewrap is
   * missing, none start, saying what to install.
   */
  readonly sandboxes?:
    | false
    | {
      readonly directory: string
      readonly executionTimeoutMillis?: number | undefined
      readonly maxRunningPerMember?: number | undefined
      readonly maxRunningPerOrganization?: number | undefined
    }
    | undefined
  /** The web console at `/` (on unless `false`); `directory` holds a build other than the package's. */
  readonly console?: false | { readonly directory?: string | undefined } | undefined
  /** The background worker (schedules, playbook and agent runs); on with its defaults when absent. */
  readonly worker?: false | Omit<Worker.Options, "sign" | "workerId"> | undefined
}

/**
 * The SQL client of a store, with the table prefix and the chat event bus: over PostgreSQL, shared
 * by every process with LISTEN/NOTIFY; over PGlite (one process), within the process.
 */
export const client = (
  options: Options
): Layer.Layer<SqlClient.SqlClient | TablePrefix.TablePrefix | ChatEventBus.ChatEventBus, unknown> =>
  options.store._tag === "Postgres"
    ? ChatEventBusPg.layer.pipe(
      Layer.provideMerge(
        Layer.merge(PostgresClient.layer({ url: options.store.url }), TablePrefix.layer(options.prefix))
      )
    )
    : Layer.mergeAll(
      PgliteClient.layer({
        dataDir: options.store.dataDir,
        // The template is migrated under the default prefix; another prefix starts from scratch.
        template: options.prefix === undefined || options.prefix === TablePrefix.defaultPrefix
          ? options.store.template
          : undefined
      }),
      TablePrefix.layer(options.prefix),
      ChatEventBus.layer
    )

/**
 * The ports the SQL store does not provide (the rate limiter is the store's, shared by every
 * process): the configured models, the live connectors, delivery (e-mail when SMTP is configured,
 * else every e-mail target fails saying so; chat channels through their webhooks), outbound events
 * signed as Standard Webhooks, the chart
 * renderer, scrypt for passwords, and the sandbox runtime (bubblewrap) where it is configured and can run.
 */
export const platform = (options: Options) =>
  Layer.mergeAll(
    // Core's random ids; API key secrets hashed in the calling thread (not Web Crypto's thread pool).
    IdGenerator.layer,
    Secrets.layer,
    Passwords.layer(),
    Providers.layer(options.models ?? {}),
    // The runtime queries FILES connectors on the databases these keep in the store.
    ConnectorsRuntime.layerWith({
      ...ConnectorsRuntime.defaultOptions,
      demoCache: options.demoCache,
      access: options.connectorAccess
    }).pipe(Layer.provideMerge(FilesConnector.layer({
      cacheDirectory: options.files?.cacheDirectory ?? NodePath.join(NodeOs.tmpdir(), `sightline-files-${process.pid}`),
      limits: options.files?.limits,
      memoryBytes: options.files?.memoryBytes
    }))),
    ConnectorsTester.layerWith(options.connectorAccess ?? ConnectorsRuntime.defaultAccess),
    options.searxngUrl === undefined ? Layer.empty : Searxng.layer({ baseUrl: options.searxngUrl }),
    Transport.layer({ smtp: options.smtp, webhooks: { allowPrivate: options.webhookAllowPrivate } }),
    // An agent's client ID metadata document is fetched under the webhooks' network rule.
    ClientDocuments.layer({ allowPrivate: options.webhookAllowPrivate }),
    // Outbound events, signed as Standard Webhooks, under the same rule.
    EventWebhook.layer({ allowPrivate: options.webhookAllowPrivate }),
    VegaCharts.layer(),
    options.sandboxes === undefined || options.sandboxes === false || !hasRole(options, "sandbox")
      ? SandboxRuntime.layerUnconfigured
      : BubblewrapRuntime.layerOrUnavailable({
        directory: options.sandboxes.directory,
        limits: options.sandboxes.executionTimeoutMillis === undefined
          ? undefined
          : { executionTimeoutMillis: options.sandboxes.executionTimeoutMillis }
      })
  )

/** Whether this process has `role` (every role when none are given). */
export const hasRole = (options: Options, role: Role): boolean =>
  options.roles === undefined || options.roles.includes(role)

/**
 * Where sandboxes run: with a cluster secret, on the runners of the deployment (this process one of
 * them with the `sandbox` role), reached through the sandbox channel; else each process its own.
 */
export const runners = (options: Options) =>
  options.cluster === undefined
    ? Layer.empty
    : SandboxRunners.layer({
      url: hasRole(options, "sandbox") ? options.cluster.url : undefined,
      heartbeatMillis: options.cluster.heartbeatMillis
    }).pipe(Layer.provide(SandboxChannel.layerClient(options.cluster.secret)))

/** What a new organization's library holds unless the options say otherwise. */
export const defaultStarterLibrary: ReadonlyArray<Organizations.StarterFile> = [{
  path: DemoModel.path,
  text: DemoModel.yaml
}]

/** Every use case of core, over the store and the platform ports. */
export const useCases = (options: Options) =>
  UseCases.layerWith({
    starterLibrary: options.starterLibrary ?? defaultStarterLibrary,
    // One process owns an embedded store: the sandboxes it lists as running died with its last run.
    sandboxes: {
      releaseOnStart: options.store._tag === "Pglite" ? "all" : "stale",
      // Sandboxes say they are alive as often as their runner does, and are let go as soon after it dies.
      ...(options.cluster?.heartbeatMillis === undefined ? {} : { heartbeatMillis: options.cluster.heartbeatMillis }),
      ...(options.sandboxes === undefined || options.sandboxes === false ? {} : {
        maxRunningPerMember: options.sandboxes.maxRunningPerMember,
        maxRunningPerOrganization: options.sandboxes.maxRunningPerOrganization
      })
    },
    ...(options.playbookRunTimeoutMillis === undefined && options.publicUrl === undefined
      ? {}
      : {
        playbookRuns: {
          timeoutMillis: options.playbookRunTimeoutMillis ?? PlaybookRuns.defaultOptions.timeoutMillis,
          // A delivered dashboard links to the console, which is served at the public URL.
          consoleUrl: options.publicUrl
        }
      }),
    ...(options.liveness === undefined ? {} : {
      chats: { staleRunAfter: options.liveness.staleRunAfterMillis },
      answers: { ...Answers.defaultOptions, heartbeatMillis: options.liveness.heartbeatMillis },
      followIdleCheckMillis: options.liveness.followIdleCheckMillis
    })
  })

/** The use cases and ports over the store of `options`, migrated when built. */
export const core = (options: Options) =>
  useCases(options).pipe(
    // The platform's delivery reads the store's chat channels; the runners register in the store.
    Layer.provideMerge(
      runners(options).pipe(Layer.provideMerge(platform(options).pipe(Layer.provideMerge(SqlStore.layer))))
    ),
    Layer.provideMerge(client(options)),
    // Defined without spans, as the server runs them (`untraced`, and `Traced.fn` in core), unless
    // traces are exported.
    Layer.provide(options.telemetry === undefined ? untraced : Layer.empty)
  )

/**
 * Answers what Node's HTTP parser refuses before any handler runs (headers over its limit, bytes a
 * path may not hold, a malformed request line) in the envelope, instead of an empty 400 or 431.
 */
export const answerClientErrors = <S extends NodeHttp.Server>(server: S): S => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy()
    const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : error.code === "HPE_REQUEST_TIMEOUT" ? 408 : 400
    const message = status === 431
      ? "Request header fields too large"
      : status === 408
      ? "Request timed out before it was complete"
      : "Malformed request: the request line or headers could not be parsed (a path must be percent-encoded ASCII)"
    const body = JSON.stringify({ error: { code: status === 408 ? "timeout" : "invalid_request", message } })
    socket.end(
      `HTTP/1.1 ${status} ${NodeHttp.STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    )
  })
  return server
}

/** Readiness: the store answers a query. */
export const readiness: Layer.Layer<Server.Readiness, never, SqlClient.SqlClient> = Layer.effect(
  Server.Readiness,
  Effect.map(SqlClient.SqlClient, (sql) => ({ check: Effect.asVoid(sql`SELECT 1`) }))
)

/**
 * The web console's routes: `GET /` and `GET /assets/*`, from files read once at start. Without a
 * build, `/` says how to make one; the API is unaffected either way.
 */
export const consoleRoutes = (options: Options): Layer.Layer<never> => {
  if (options.console === false) return Layer.empty
  const served = ConsoleAssets.serve(ConsoleAssets.readAll(options.console?.directory))
  const handler = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const found = served(request.url)
    return found === undefined
      ? HttpServerResponse.unsafeJson({ error: { code: "not_found", message: "Not found" } }, { status: 404 })
      : typeof found.body === "string"
      ? HttpServerResponse.text(found.body, { status: found.status, headers: found.headers })
      : HttpServerResponse.uint8Array(found.body, { status: found.status, headers: found.headers })
  })
  return HttpApiBuilder.Router.use((router) =>
    Effect.all([router.get("/", handler), router.get("/index.html", handler), router.get("/assets/*", handler)])
  )
}

/** What a process without the `api` role answers: health, readiness, metrics and the sandbox channel. */
const servedWithoutApi = (url: string): boolean =>
  ["/healthz", "/readyz", "/metrics"].includes(url.split("?")[0]!) || SandboxChannel.isChannelPath(url)

/** On a process without the `api` role, every other route answers 404 saying so. */
const apiRoleGate = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) =>
      servedWithoutApi(request.url) ? app : HttpServerResponse.unsafeJson(
        {
          error: {
            code: "not_found",
            message: "this server process does not serve the API (its SIGHTLINE_ROLES leave out api)"
          }
        },
        { status: 404 }
      )
  )
)

/** The HTTP application (routes only; a host adds the `HttpServer`) over a ready core. */
export const http = (options: Options) =>
  Layer.mergeAll(
    Server.layer,
    hasRole(options, "api") ? consoleRoutes(options) : apiRoleGate,
    // Always: end users' sessions are used from the organizations' own origins.
    Server.layerCors(options.corsOrigins ?? []),
    options.cluster !== undefined && hasRole(options, "sandbox")
      ? SandboxChannel.layerServer(options.cluster.secret)
      : Layer.empty
  ).pipe(
    Layer.provide(readiness),
    Layer.provide(RateLimit.layer(RateLimit.perMinute(options.rateLimitPerMinute ?? RateLimit.defaultPerMinute))),
    Layer.provide(options.jwt === undefined ? Layer.empty : Jwt.layer(options.jwt)),
    Layer.provide(options.publicUrl === undefined ? Layer.empty : PublicUrl.layer(options.publicUrl)),
    Layer.provide(PublicUrl.layerAllowedOrigins(options.corsOrigins ?? [])),
    Layer.provide(
      options.trustedProxies === undefined ? Layer.empty : ClientAddress.layerTrustedProxies(options.trustedProxies)
    ),
    Layer.provide(options.oidc === undefined ? Layer.empty : Oidc.layer(options.oidc)),
    Layer.provide(options.mcpOAuth === true ? McpOAuth.layer : Layer.empty),
    Layer.provide(
      options.metricsToken === undefined ? Layer.empty : Layer.succeed(HttpMetrics.MetricsToken, options.metricsToken)
    )
  )

/** The signer of asset URLs: one per process, shared by the routes and the worker's reports. */
export const assetUrls = (options: Options): Layer.Layer<AssetUrls.AssetUrls> =>
  options.assetSecret === undefined ? AssetUrls.layerEphemeral : AssetUrls.layer({ secret: options.assetSecret })

/** The background worker of this process, unless `options.worker` is `false`. */
export const worker = (options: Options) =>
  options.worker === false || !hasRole(options, "worker")
    ? Layer.empty
    : Layer.unwrapEffect(Effect.map(AssetUrls.AssetUrls, ({ sign }) =>
      Worker.layer({
        ...options.worker,
        workerId: `${NodeOs.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`,
        sign
      })))

/**
 * The standalone server sends spans nowhere (it installs no tracer to export them), so it builds
 * none: every use case's span and the platform's span per request (with the URL it parses and the
 * headers it copies for it) cost CPU on every request and told nobody anything. A host that
 * installs a tracer (OpenTelemetry) over the library's layers keeps them all.
 */
export const untraced: Layer.Layer<never> = Layer.mergeAll(
  Layer.setTracerEnabled(false),
  Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
)

/**
 * The HTTP application and the background worker over a ready core, sharing one asset URL signer;
 * untraced unless `options.telemetry` asks for traces, which the process then exports with `observability`
 * around everything it runs (the server's request fibers are forked outside this layer).
 */
export const app = (options: Options) =>
  Layer.mergeAll(http(options), worker(options), backlogMetrics(options)).pipe(
    Layer.provideMerge(assetUrls(options)),
    Layer.provide(options.telemetry === undefined ? untraced : Layer.empty)
  )

/** Where metrics are read, the job queue's backlog is read into them every 15 seconds. */
const backlogMetrics = (options: Options) =>
  options.telemetry === undefined && options.metricsToken === undefined
    ? Layer.empty
    : Layer.scopedDiscard(Effect.forkScoped(Effect.repeat(Metrics.readBacklog, Schedule.spaced("15 seconds"))))

/**
 * What the process exports of itself: its spans and metrics to a collector where
 * `options.telemetry` asks for it, and request metrics wherever metrics are read (a collector or
 * `GET /metrics`). Provide it around the server and the core, so that every fiber they fork has it.
 */
export const observability = (options: Options): Layer.Layer<never> =>
  Layer.mergeAll(
    options.telemetry === undefined ? Layer.empty : Layer.merge(
      Telemetry.layer(options.telemetry),
      // A span records its request's URL: none for URLs that carry a credential.
      Layer.merge(
        Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, Server.credentialInUrl),
        // And its headers: only those that never carry one, the others redacted.
        Layer.locallyScoped(Headers.currentRedactedNames, [Server.unrecordedHeaders])
      )
    ),
    options.telemetry === undefined && options.metricsToken === undefined ? Layer.empty : HttpMetrics.layerEnabled
  )

/** The whole application and the core it runs on (so the CLI and tests reach the use cases). */
export const layer = (options: Options) => app(options).pipe(Layer.provideMerge(core(options)))

/** `Some` options for JWTs from the environment. */
export const jwtFromEnv = Jwt.fromConfig.pipe(Effect.map(Option.getOrUndefined))

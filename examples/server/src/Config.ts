/**
 * The standalone server's configuration, from the environment:
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `SIGHTLINE_PORT` | 8787 | port to listen on |
 * | `SIGHTLINE_HOST` | 127.0.0.1 | address to listen on |
 * | `SIGHTLINE_DATA_DIR` | ./.sightline | PGlite data directory (when `DATABASE_URL` is unset) |
 * | `DATABASE_URL` | unset | PostgreSQL; when set it is used instead of the data directory |
 * | `SIGHTLINE_TABLE_PREFIX` | sightline_ | prefix of every table |
 * | `SIGHTLINE_JWT_SECRET` | unset | enables HS256 JWTs (also `SIGHTLINE_JWT_JWKS_URL`, `_ISSUER`, `_AUDIENCE`) |
 * | `SIGHTLINE_RATE_LIMIT_PER_MINUTE` | 600 | requests a minute per organization |
 * | `SIGHTLINE_ASSET_SECRET` | random per process | key of signed asset URLs (share it between processes) |
 * | `SIGHTLINE_CORS_ORIGINS` | none | comma-separated browser origins allowed to call the API |
 * | `SIGHTLINE_OIDC_ISSUER`, `_CLIENT_ID`, `_CLIENT_SECRET` | unset | sign-in through an OpenID Provider (`_NAME` labels its button); its redirect URI is `<public URL>/v2/auth/oidc/callback` |
 * | `SIGHTLINE_PUBLIC_URL` | `http://localhost:<port>` | where people reach the server: the base of sign-in links |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, ... | unset | export traces over OTLP/HTTP (`Telemetry`) |
 * | `SIGHTLINE_METRICS_TOKEN` | unset | serves `GET /metrics` (Prometheus text) to scrapers that send it as a bearer token |
 * | `SIGHTLINE_MCP_OAUTH` | unset | `1` lets agents connect to `/mcp` with a member's sign-in (OAuth 2.1), not only with a key |
 * | `SIGHTLINE_SEARXNG_URL` | unset | a SearXNG instance (JSON format enabled) for the agent's `web_search` |
 * | `SIGHTLINE_SMTP_URL` | unset | `smtp://user:pass@host:587` (or `smtps://`): e-mail delivery of reports |
 * | `SIGHTLINE_MAIL_FROM` | `Sightline <sightline@localhost>` | the `From` of report e-mails |
 * | `SIGHTLINE_CONNECTOR_ALLOW_PRIVATE` | unset | `1` lets POSTGRES and MYSQL connectors reach private and loopback addresses and Unix sockets |
 * | `SIGHTLINE_CONNECTOR_ALLOW_HOSTS` | none | comma-separated host names and CIDR ranges connectors may reach although private |
 * | `SIGHTLINE_CONNECTOR_ALLOW_SUPERUSER` | unset | `1` lets connectors log in as a superuser or a role that reads the server's files |
 * | `SIGHTLINE_TRUSTED_PROXIES` | none | comma-separated addresses and CIDR ranges of reverse proxies whose `X-Forwarded-For` names the client |
 * | `SIGHTLINE_WEBHOOK_ALLOW_PRIVATE` | unset | `1` lets chat-channel webhooks use http and private addresses, and OAuth client metadata documents be read from private addresses (development only) |
 * | `SIGHTLINE_WORKER_CONCURRENCY` | 2 | playbook and agent runs this process executes at once (0: no worker) |
 * | `SIGHTLINE_FILES_DIR` | `$SIGHTLINE_DATA_DIR/files` | this process's copies of FILES connectors' databases |
 * | `SIGHTLINE_FILES_MAX_FILE_MB`, `SIGHTLINE_FILES_MAX_ORGANIZATION_MB` | 200, 2048 | sizes FILES connectors take |
 * | `SIGHTLINE_FILES_MEMORY_MB` | 2048 | memory the open FILES databases of a process take together |
 * | `SIGHTLINE_SANDBOX_DIR` | `$SIGHTLINE_DATA_DIR/sandboxes` | where sandbox workspaces live (`off`: no sandboxes) |
 * | `SIGHTLINE_PGLITE_TEMPLATE` | the built server's `pglite-template.tar.gz` | a prepared cluster a new data directory starts from (`off`: none) |
 * | `SIGHTLINE_DEMO_CACHE` | the built server's `demo-cache/` | where the DEMO connector's database is kept once built (`off`: built in memory by every process) |
 * | `SIGHTLINE_SANDBOX_TIMEOUT_SECONDS` | 120 | wall-clock limit of one sandbox execution |
 * | `SIGHTLINE_SANDBOX_MAX_PER_MEMBER`, `SIGHTLINE_SANDBOX_MAX_PER_ORGANIZATION` | 3, 10 | sandboxes running at once per member, per organization, on every process together |
 * | `SIGHTLINE_ROLES` | `api,worker,sandbox` | what this process does: `api` (the HTTP API, the console, chat answers), `worker` (schedules, playbook, agent and evaluation runs, deliveries), `sandbox` (runs sandboxes); health, readiness and metrics are always served |
 * | `SIGHTLINE_CLUSTER_SECRET` | unset | the secret of the sandbox channel between processes (32 characters or more, the same on every process): any process then serves every sandbox, whichever runs it |
 * | `SIGHTLINE_INTERNAL_URL` | `http://<SIGHTLINE_HOST>:<SIGHTLINE_PORT>` (the host name when listening on every address) | where the other processes reach this one's sandbox channel |
 * | `SIGHTLINE_RUNNER_HEARTBEAT_SECONDS` | 10 | how often a sandbox runner says it is alive; its sandboxes are reported stopped after three missed |
 * | `SIGHTLINE_RUN_STALE_SECONDS` | 60 | a chat answer whose process says nothing for this long (it died) is ended as failed; its process says it is alive every twelfth of it |
 * | `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `SIGHTLINE_OPENAI_COMPATIBLE_URL`, `SIGHTLINE_MODELS`, ... | unset | model providers (`@sightline/ai` `Providers`) |
 */
import * as Providers from "@sightline/ai/Providers"
import * as ConnectorFiles from "@sightline/core/ConnectorFiles"
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Sandboxes from "@sightline/core/Sandboxes"
import * as Jwt from "@sightline/http/Jwt"
import * as Oidc from "@sightline/http/Oidc"
import * as RateLimit from "@sightline/http/RateLimit"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as NodeOs from "node:os"
import { fileURLToPath } from "node:url"
import type * as Sightline from "./Sightline.js"
import * as Telemetry from "./Telemetry.js"

/**
 * The prepared PGlite cluster a new data directory starts from: `pnpm start` writes it beside the
 * built server (`dist/pglite-template.tar.gz`); run from sources there is none, and a new directory
 * is created and migrated instead.
 */
const builtTemplate: string = fileURLToPath(new URL("./pglite-template.tar.gz", import.meta.url))

/**
 * Where the DEMO connector's database is kept once built: beside the built server, where `pnpm start`
 * builds it, so that a fresh install's first question loads it (about 2 s) instead of building it
 * (about 9 s).
 */
export const builtDemoCache: string = fileURLToPath(new URL("./demo-cache", import.meta.url))

/** Where to listen. */
export interface Listen {
  readonly host: string
  readonly port: number
}

/** The listen address. */
export const listen: Config.Config<Listen> = Config.all({
  host: Config.string("SIGHTLINE_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("SIGHTLINE_PORT").pipe(Config.withDefault(8787))
})

/**
 * The base of the links the server prints and hands out: the configured public URL, else this
 * machine's loopback name and port (`localhost`, which browsers treat as a secure origin, so the
 * `Secure` session cookie works over plain http there).
 */
export const publicBase = (options: Sightline.Options, listen: Listen): string =>
  options.publicUrl ??
    `http://${
      ["127.0.0.1", "0.0.0.0", "::", "::1", "localhost"].includes(listen.host) ? "localhost" : listen.host
    }:${listen.port}`

/** What a process does; each is on unless `SIGHTLINE_ROLES` leaves it out. */
export const roles: Config.Config<ReadonlyArray<Sightline.Role>> = Config.array(Config.string(), "SIGHTLINE_ROLES")
  .pipe(
    Config.withDefault(["api", "worker", "sandbox"]),
    Config.map((entries) => entries.map((entry) => entry.trim()).filter((entry) => entry !== "")),
    Config.validate({
      message: "must list one or more of api, worker, sandbox",
      validation: (entries) =>
        entries.length > 0 && entries.every((entry) => ["api", "worker", "sandbox"].includes(entry))
    }),
    Config.map((entries) => entries as ReadonlyArray<Sightline.Role>)
  )

/** Where the other processes reach this one, by default: its listen address (the host name for every address). */
const internalUrlOf = (listen: Listen): string =>
  `http://${["0.0.0.0", "::"].includes(listen.host) ? NodeOs.hostname() : listen.host}:${listen.port}`

/** The store and HTTP options of `Sightline.layer`. */
export const options: Config.Config<Sightline.Options> = Config.all({
  listen,
  roles,
  clusterSecret: Config.option(
    Config.redacted("SIGHTLINE_CLUSTER_SECRET").pipe(
      Config.validate({
        message: "must be 32 characters or more",
        validation: (secret) => Redacted.value(secret).length >= 32
      })
    )
  ),
  internalUrl: Config.option(Config.url("SIGHTLINE_INTERNAL_URL")),
  runStaleSeconds: Config.option(
    Config.number("SIGHTLINE_RUN_STALE_SECONDS").pipe(
      Config.validate({ message: "must be a positive number", validation: (n) => n > 0 })
    )
  ),
  runnerHeartbeatSeconds: Config.number("SIGHTLINE_RUNNER_HEARTBEAT_SECONDS").pipe(
    Config.validate({ message: "must be a positive number", validation: (n) => n > 0 }),
    Config.withDefault(10)
  ),
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  dataDir: Config.string("SIGHTLINE_DATA_DIR").pipe(Config.withDefault("./.sightline")),
  prefix: Config.option(Config.string("SIGHTLINE_TABLE_PREFIX")),
  rateLimitPerMinute: Config.integer("SIGHTLINE_RATE_LIMIT_PER_MINUTE").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(RateLimit.defaultPerMinute)
  ),
  jwt: Jwt.fromConfig,
  assetSecret: Config.option(Config.redacted("SIGHTLINE_ASSET_SECRET")),
  models: Providers.fromEnv,
  searxngUrl: Config.option(Config.string("SIGHTLINE_SEARXNG_URL")),
  corsOrigins: Config.withDefault(Config.array(Config.string(), "SIGHTLINE_CORS_ORIGINS"), []),
  publicUrl: Config.option(Config.url("SIGHTLINE_PUBLIC_URL")),
  oidc: Oidc.fromConfig,
  smtpUrl: Config.option(Config.redacted("SIGHTLINE_SMTP_URL")),
  mailFrom: Config.string("SIGHTLINE_MAIL_FROM").pipe(Config.withDefault("Sightline <sightline@localhost>")),
  connectorAccess: Config.all({
    network: Config.all({
      allowPrivate: Config.boolean("SIGHTLINE_CONNECTOR_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
      allowHosts: Config.array(Config.string(), "SIGHTLINE_CONNECTOR_ALLOW_HOSTS").pipe(
        Config.withDefault([]),
        Config.map((entries) => entries.map((entry) => entry.trim()).filter((entry) => entry !== "")),
        Config.mapOrFail((entries) =>
          Either.mapLeft(
            NetworkAccess.validateAllowHosts(entries),
            (problem) => ConfigError.InvalidData(["SIGHTLINE_CONNECTOR_ALLOW_HOSTS"], problem)
          )
        )
      )
    }),
    allowSuperuser: Config.boolean("SIGHTLINE_CONNECTOR_ALLOW_SUPERUSER").pipe(Config.withDefault(false))
  }),
  trustedProxies: Config.array(Config.string(), "SIGHTLINE_TRUSTED_PROXIES").pipe(
    Config.withDefault([]),
    Config.map((entries) => entries.map((entry) => entry.trim()).filter((entry) => entry !== "")),
    Config.validate({
      message: "each entry must be an IP address or a CIDR range",
      validation: (entries) => entries.every(NetworkAccess.isAddressOrRange)
    })
  ),
  webhookAllowPrivate: Config.boolean("SIGHTLINE_WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  mcpOAuth: Config.boolean("SIGHTLINE_MCP_OAUTH").pipe(Config.withDefault(false)),
  telemetry: Telemetry.fromEnv,
  metricsToken: Config.option(Config.redacted("SIGHTLINE_METRICS_TOKEN")),
  workerConcurrency: Config.integer("SIGHTLINE_WORKER_CONCURRENCY").pipe(
    Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(2)
  ),
  sandboxDir: Config.option(Config.string("SIGHTLINE_SANDBOX_DIR")),
  filesDir: Config.option(Config.string("SIGHTLINE_FILES_DIR")),
  filesMaxFileMb: Config.integer("SIGHTLINE_FILES_MAX_FILE_MB").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(ConnectorFiles.defaultLimits.maxFileBytes / 1024 ** 2)
  ),
  filesMaxOrganizationMb: Config.integer("SIGHTLINE_FILES_MAX_ORGANIZATION_MB").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(ConnectorFiles.defaultLimits.maxOrganizationBytes / 1024 ** 2)
  ),
  filesMemoryMb: Config.integer("SIGHTLINE_FILES_MEMORY_MB").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(2048)
  ),
  pgliteTemplate: Config.string("SIGHTLINE_PGLITE_TEMPLATE").pipe(Config.withDefault(builtTemplate)),
  demoCache: Config.string("SIGHTLINE_DEMO_CACHE").pipe(Config.withDefault(builtDemoCache)),
  sandboxMaxPerMember: Config.integer("SIGHTLINE_SANDBOX_MAX_PER_MEMBER").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(Sandboxes.defaultOptions.maxRunningPerMember)
  ),
  sandboxMaxPerOrganization: Config.integer("SIGHTLINE_SANDBOX_MAX_PER_ORGANIZATION").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(Sandboxes.defaultOptions.maxRunningPerOrganization)
  ),
  sandboxTimeoutSeconds: Config.integer("SIGHTLINE_SANDBOX_TIMEOUT_SECONDS").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(120)
  )
}).pipe(
  Config.map((
    {
      assetSecret,
      clusterSecret,
      connectorAccess,
      internalUrl,
      listen,
      roles,
      runnerHeartbeatSeconds,
      runStaleSeconds,
      corsOrigins,
      dataDir,
      databaseUrl,
      demoCache,
      filesDir,
      filesMaxFileMb,
      filesMaxOrganizationMb,
      filesMemoryMb,
      jwt,
      mailFrom,
      mcpOAuth,
      metricsToken,
      telemetry,
      models,
      oidc,
      pgliteTemplate,
      prefix,
      publicUrl,
      rateLimitPerMinute,
      searxngUrl,
      smtpUrl,
      sandboxDir,
      sandboxMaxPerMember,
      sandboxMaxPerOrganization,
      sandboxTimeoutSeconds,
      trustedProxies,
      webhookAllowPrivate,
      workerConcurrency
    }
  ): Sightline.Options => ({
    store: Option.match(databaseUrl, {
      onNone: () => ({ _tag: "Pglite", dataDir, template: pgliteTemplate === "off" ? undefined : pgliteTemplate }),
      onSome: (url) => ({ _tag: "Postgres", url })
    }),
    prefix: Option.getOrUndefined(prefix),
    rateLimitPerMinute,
    jwt: Option.getOrUndefined(jwt),
    assetSecret: Option.getOrUndefined(assetSecret),
    models,
    demoCache: demoCache === "off" ? undefined : demoCache,
    searxngUrl: Option.getOrUndefined(searxngUrl),
    corsOrigins: corsOrigins.map((origin) => origin.trim()).filter((origin) => origin !== ""),
    oidc: Option.getOrUndefined(oidc),
    mcpOAuth,
    telemetry: Option.getOrUndefined(telemetry),
    metricsToken: Option.getOrUndefined(metricsToken),
    publicUrl: Option.getOrUndefined(Option.map(publicUrl, (url) => url.toString().replace(/\/+$/, ""))),
    smtp: Option.match(smtpUrl, { onNone: () => undefined, onSome: (url) => ({ url, from: mailFrom }) }),
    webhookAllowPrivate,
    connectorAccess,
    trustedProxies,
    roles,
    liveness: Option.getOrUndefined(Option.map(runStaleSeconds, (seconds) => ({
      heartbeatMillis: (seconds * 1000) / 12,
      staleRunAfterMillis: seconds * 1000
    }))),
    cluster: Option.getOrUndefined(Option.map(clusterSecret, (secret) => ({
      secret,
      url: Option.match(internalUrl, {
        onNone: () => internalUrlOf(listen),
        onSome: (url) => url.toString().replace(/\/+$/, "")
      }),
      heartbeatMillis: runnerHeartbeatSeconds * 1000
    }))),
    worker: workerConcurrency === 0 ? false : { concurrency: workerConcurrency },
    files: {
      cacheDirectory: Option.getOrElse(filesDir, () => `${dataDir}/files`),
      limits: { maxFileBytes: filesMaxFileMb * 1024 ** 2, maxOrganizationBytes: filesMaxOrganizationMb * 1024 ** 2 },
      memoryBytes: filesMemoryMb * 1024 ** 2
    },
    sandboxes: Option.exists(sandboxDir, (directory) => directory === "off") ? false : {
      directory: Option.getOrElse(sandboxDir, () => `${dataDir}/sandboxes`),
      executionTimeoutMillis: sandboxTimeoutSeconds * 1000,
      maxRunningPerMember: sandboxMaxPerMember,
      maxRunningPerOrganization: sandboxMaxPerOrganization
    }
  }))
)

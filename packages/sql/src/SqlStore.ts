/**
 * Sightline's persistence in one layer: it runs the migrations, then provides every port
 * implemented over SQL. Hosts assemble it in one line:
 *
 * ```ts
 * SqlStore.layerPglite({ dataDir: "./data" })           // embedded
 * SqlStore.layerPostgres({ url: process.env.DATABASE_URL! }) // a PostgreSQL server
 * SqlStore.layer.pipe(Layer.provide(myClient), Layer.provide(TablePrefix.layer("app_sightline_")))
 * ```
 *
 * `layer` leaves out the chat event bus, whose kind depends on the deployment: `ChatEventBusPg.layer`
 * for PostgreSQL shared by several processes, core's in-process `ChatEventBus.layer` for one process.
 *
 * @since 0.1.0
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { AgentRepo } from "@sightline/core/AgentRepo"
import type { ApiKeyRepo } from "@sightline/core/ApiKeyRepo"
import type { AppRepo } from "@sightline/core/AppRepo"
import type { AssetStore } from "@sightline/core/AssetStore"
import type { AuditLogRepo } from "@sightline/core/AuditLogRepo"
import type { ChangeRepo } from "@sightline/core/ChangeRepo"
import type { ChatChannelRepo } from "@sightline/core/ChatChannelRepo"
import * as ChatEventBus from "@sightline/core/ChatEventBus"
import type { ChatRepo } from "@sightline/core/ChatRepo"
import type { ConnectorRepo } from "@sightline/core/ConnectorRepo"
import type { EvalRunRepo } from "@sightline/core/EvalRunRepo"
import type { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import type { FeedbackRepo } from "@sightline/core/FeedbackRepo"
import type { GroupRepo } from "@sightline/core/GroupRepo"
import type { JobQueue } from "@sightline/core/JobQueue"
import type { LibraryStore } from "@sightline/core/LibraryStore"
import type { MemberRepo } from "@sightline/core/MemberRepo"
import type { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import type { OutboundEventRepo } from "@sightline/core/OutboundEventRepo"
import type { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import type { RateLimiter } from "@sightline/core/RateLimiter"
import type { RoleRepo } from "@sightline/core/RoleRepo"
import type { RunnerRepo } from "@sightline/core/RunnerRepo"
import type { SandboxRepo } from "@sightline/core/SandboxRepo"
import type { SessionRepo } from "@sightline/core/SessionRepo"
import type { Transaction } from "@sightline/core/Transaction"
import type { WebhookEndpointRepo } from "@sightline/core/WebhookEndpointRepo"
import type * as Cause from "effect/Cause"
import type * as ConfigError from "effect/ConfigError"
import * as Layer from "effect/Layer"
import * as AgentRepoSql from "./AgentRepoSql.js"
import * as ApiKeyRepoSql from "./ApiKeyRepoSql.js"
import * as AppRepoSql from "./AppRepoSql.js"
import * as AssetStoreSql from "./AssetStoreSql.js"
import * as AuditLogRepoSql from "./AuditLogRepoSql.js"
import * as ChangeRepoSql from "./ChangeRepoSql.js"
import * as ChatChannelRepoSql from "./ChatChannelRepoSql.js"
import * as ChatEventBusPg from "./ChatEventBusPg.js"
import * as ChatRepoSql from "./ChatRepoSql.js"
import * as ConnectorRepoSql from "./ConnectorRepoSql.js"
import * as EvalRunRepoSql from "./EvalRunRepoSql.js"
import * as ExecutionRepoSql from "./ExecutionRepoSql.js"
import * as FeedbackRepoSql from "./FeedbackRepoSql.js"
import * as GroupRepoSql from "./GroupRepoSql.js"
import * as JobQueueSql from "./JobQueueSql.js"
import * as LibraryStoreSql from "./LibraryStoreSql.js"
import * as MemberRepoSql from "./MemberRepoSql.js"
import * as Migrations from "./Migrations.js"
import * as OrganizationRepoSql from "./OrganizationRepoSql.js"
import * as OutboundEventRepoSql from "./OutboundEventRepoSql.js"
import * as PgliteClient from "./PgliteClient.js"
import * as PlaybookRepoSql from "./PlaybookRepoSql.js"
import * as PostgresClient from "./PostgresClient.js"
import * as RateLimiterSql from "./RateLimiterSql.js"
import * as RoleRepoSql from "./RoleRepoSql.js"
import * as RunnerRepoSql from "./RunnerRepoSql.js"
import * as SandboxRepoSql from "./SandboxRepoSql.js"
import * as SessionRepoSql from "./SessionRepoSql.js"
import * as SqlTransaction from "./SqlTransaction.js"
import * as TablePrefix from "./TablePrefix.js"
import * as WebhookEndpointRepoSql from "./WebhookEndpointRepoSql.js"

/**
 * Every core port the SQL store provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Ports =
  | Transaction
  | OrganizationRepo
  | MemberRepo
  | ChangeRepo
  | LibraryStore
  | RoleRepo
  | GroupRepo
  | ApiKeyRepo
  | AuditLogRepo
  | ChatRepo
  | ConnectorRepo
  | EvalRunRepo
  | FeedbackRepo
  | PlaybookRepo
  | SandboxRepo
  | RunnerRepo
  | ExecutionRepo
  | AgentRepo
  | AppRepo
  | ChatChannelRepo
  | WebhookEndpointRepo
  | OutboundEventRepo
  | JobQueue
  | RateLimiter
  | AssetStore
  | SessionRepo

/**
 * Errors of building a store: opening the database, an invalid prefix, a failed migration.
 *
 * @since 0.1.0
 * @category models
 */
export type StoreError = SqlError | MigrationError | Cause.IllegalArgumentException

/**
 * The ports over the `SqlClient` and `TablePrefix` in context, after running the migrations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Ports, MigrationError | SqlError, SqlClient.SqlClient | TablePrefix.TablePrefix> = Layer
  .mergeAll(
    SqlTransaction.layer,
    OrganizationRepoSql.layer,
    MemberRepoSql.layer,
    RoleRepoSql.layer,
    GroupRepoSql.layer,
    ApiKeyRepoSql.layer,
    AuditLogRepoSql.layer,
    ChangeRepoSql.layer,
    LibraryStoreSql.layer,
    ChatRepoSql.layer,
    ConnectorRepoSql.layer,
    EvalRunRepoSql.layer,
    FeedbackRepoSql.layer,
    PlaybookRepoSql.layer,
    SandboxRepoSql.layer,
    RunnerRepoSql.layer,
    ExecutionRepoSql.layer,
    AgentRepoSql.layer,
    AppRepoSql.layer,
    ChatChannelRepoSql.layer,
    WebhookEndpointRepoSql.layer,
    OutboundEventRepoSql.layer,
    JobQueueSql.layer,
    RateLimiterSql.layer,
    AssetStoreSql.layer,
    SessionRepoSql.layer
  ).pipe(
    Layer.provide(Migrations.layer)
  )

/**
 * Options shared by the ready-made stores.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreOptions {
  /** The table prefix (default `sightline_`). */
  readonly prefix?: string | undefined
}

/**
 * The ports of a ready-made store: `Ports` and the chat event bus of its kind of database.
 *
 * @since 0.1.0
 * @category models
 */
export type StorePorts = Ports | ChatEventBus.ChatEventBus

/**
 * The store on embedded PGlite: in a data directory, or in memory when none is given. One process
 * opens a PGlite database, so chat events are announced within the process.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPglite = (
  options: StoreOptions & { readonly dataDir?: string | undefined } = {}
): Layer.Layer<StorePorts, StoreError> =>
  Layer.merge(layer, ChatEventBus.layer).pipe(
    Layer.provide(
      options.dataDir === undefined ? PgliteClient.layerMemory : PgliteClient.layer({ dataDir: options.dataDir })
    ),
    Layer.provide(TablePrefix.layer(options.prefix))
  )

/**
 * The store on a PostgreSQL server; chat events are announced to every process with LISTEN/NOTIFY.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPostgres = (
  options: StoreOptions & PostgresClient.PostgresClientConfig
): Layer.Layer<StorePorts, StoreError> =>
  Layer.merge(layer, ChatEventBusPg.layer).pipe(
    Layer.provide(PostgresClient.layer(options)),
    Layer.provide(TablePrefix.layer(options.prefix))
  )

/**
 * The store on the PostgreSQL server of `DATABASE_URL`, with the prefix of `SIGHTLINE_TABLE_PREFIX`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPostgresConfig: Layer.Layer<StorePorts, StoreError | ConfigError.ConfigError> = Layer.merge(
  layer,
  ChatEventBusPg.layer
).pipe(
  Layer.provide(PostgresClient.layerConfig()),
  Layer.provide(TablePrefix.layerConfig())
)

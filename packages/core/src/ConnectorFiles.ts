/**
 * The connector files port: what becomes of the files a FILES connector is made from. The adapter
 * (`@sightline/connectors`' `FilesConnector`) loads the uploaded files into one database (a table
 * per file), keeps it in the store where every process of the deployment reads it, and removes it
 * with its connector.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { FilesSettings } from "./Connector.js"
import { InvalidRequest } from "./Errors.js"
import type { OrganizationId } from "./Ids.js"

/**
 * An uploaded file, on the server's disk while its request lasts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Upload {
  readonly path: string
  /** The name it was sent with (its table's name comes from it). */
  readonly fileName: string
  readonly sizeBytes: number
}

/**
 * How much a deployment takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly maxFileBytes: number
  readonly maxOrganizationBytes: number
}

/**
 * The limits unless the operator sets others: 200 MB a file, 2 GB an organization.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimits: Limits = { maxFileBytes: 200 * 1024 ** 2, maxOrganizationBytes: 2 * 1024 ** 3 }

/**
 * Loads and keeps connector files.
 *
 * @since 0.1.0
 * @category services
 */
export class ConnectorFiles extends Context.Tag("@sightline/core/ConnectorFiles")<
  ConnectorFiles,
  ConnectorFiles.Service
>() {}

export declare namespace ConnectorFiles {
  /** The operations. */
  export interface Service {
    /** The most bytes of one file, and of all of an organization's connector databases. */
    readonly limits: Limits
    /**
     * Loads `uploads` into a new database and keeps it: the settings of the connector it makes. A
     * file that does not load is `InvalidRequest` naming it (and, where it can, the line), and
     * nothing is kept.
     */
    readonly load: (
      organizationId: OrganizationId,
      uploads: ReadonlyArray<Upload>
    ) => Effect.Effect<FilesSettings, InvalidRequest>
    /**
     * A new version of a connector's database: `uploads` on top of `current` (a file whose table
     * exists replaces it, under its name), without the tables of `drop`. `current` stays as it was.
     */
    readonly change: (
      organizationId: OrganizationId,
      current: FilesSettings,
      uploads: ReadonlyArray<Upload>,
      drop: ReadonlyArray<string>
    ) => Effect.Effect<FilesSettings, InvalidRequest>
    /** Forgets what `load` or `change` kept (a connector deleted, replaced, or never stored). */
    readonly remove: (settings: FilesSettings) => Effect.Effect<void>
  }
}

/**
 * Why a deployment without connector files refuses them.
 *
 * @since 0.1.0
 * @category constants
 */
export const unconfiguredMessage = "FILES connectors are not configured on this server"

/**
 * The port of a deployment that has no connector files: every upload is refused, saying so.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnconfigured: Layer.Layer<ConnectorFiles> = Layer.succeed(
  ConnectorFiles,
  ConnectorFiles.of({
    limits: defaultLimits,
    load: () => Effect.fail(new InvalidRequest({ message: unconfiguredMessage })),
    change: () => Effect.fail(new InvalidRequest({ message: unconfiguredMessage })),
    remove: () => Effect.void
  })
)

/**
 * A port for unit tests: a file loads as an empty table named after it (`broken*` files fail), and
 * `removed` lists what was forgotten.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (limits: Limits = defaultLimits): Layer.Layer<ConnectorFiles | MemoryConnectorFiles> =>
  Layer.effectContext(Effect.map(Ref.make<ReadonlyArray<string>>([]), (removed) => {
    let loads = 0
    const service = ConnectorFiles.of({
      limits,
      load: (_, uploads) => {
        const broken = uploads.find((upload) => upload.fileName.startsWith("broken"))
        if (broken !== undefined) {
          return Effect.fail(new InvalidRequest({ message: `${broken.fileName}: line 2 does not read` }))
        }
        loads += 1
        return Effect.succeed({
          tables: uploads.map((upload) => ({
            table: upload.fileName.replace(/\.[a-z]+$/, ""),
            file_name: upload.fileName,
            format: "csv" as const,
            size_bytes: upload.sizeBytes,
            rows: 0,
            columns: []
          })),
          storage_prefix: `memory/${loads}/`,
          size_bytes: uploads.reduce((sum, upload) => sum + upload.sizeBytes, 0)
        })
      },
      change: (organizationId, current, uploads, drop) =>
        Effect.map(service.load(organizationId, uploads), (loaded) => {
          const replaced = new Set([...drop, ...loaded.tables.map((table) => table.table)])
          const kept = current.tables.filter((table) => !replaced.has(table.table))
          return {
            ...loaded,
            tables: [...kept, ...loaded.tables],
            size_bytes: [...kept, ...loaded.tables].reduce((sum, table) => sum + table.size_bytes, 0)
          }
        }),
      remove: (settings) => Ref.update(removed, (all) => [...all, settings.storage_prefix])
    })
    return Context.make(ConnectorFiles, service).pipe(
      Context.add(MemoryConnectorFiles, { removed: Ref.get(removed) })
    )
  }))

/**
 * What the memory port forgot, for tests.
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryConnectorFiles extends Context.Tag("@sightline/core/ConnectorFiles/MemoryConnectorFiles")<
  MemoryConnectorFiles,
  { readonly removed: Effect.Effect<ReadonlyArray<string>> }
>() {}

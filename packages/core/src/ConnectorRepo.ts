/**
 * The connector repository port: connectors and their access grants.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import { ConnectorAccess, ConnectorRecord, type NewConnector } from "./Connector.js"
import { NotFound } from "./Errors.js"
import { ConnectorId, type OrganizationId } from "./Ids.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores connectors.
 *
 * @since 0.1.0
 * @category services
 */
export class ConnectorRepo extends Context.Tag("@sightline/core/ConnectorRepo")<
  ConnectorRepo,
  ConnectorRepo.Service
>() {}

export declare namespace ConnectorRepo {
  /** Connector storage. A connector's access is stored with it and removed with it. */
  export interface Service {
    /**
     * Stores a new connector with its initial access and returns it with its id: the next integer of
     * a sequence shared by every organization (a SQL sequence), so ids never repeat in a deployment.
     */
    readonly create: (connector: NewConnector, access: ConnectorAccess) => Effect.Effect<ConnectorRecord>
    readonly get: (organizationId: OrganizationId, id: ConnectorId) => Effect.Effect<Option.Option<ConnectorRecord>>
    /** `get` that locks the connector until the surrounding transaction ends (update, access changes). */
    readonly getForUpdate: (
      organizationId: OrganizationId,
      id: ConnectorId
    ) => Effect.Effect<Option.Option<ConnectorRecord>>
    /** Every connector of the organization, by id (oldest first). */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<ConnectorRecord>>
    /**
     * Every connector of the organization with its access, by id: what deciding visibility for a
     * whole listing (connectors the caller can use, agents whose connectors it reaches) needs, in
     * one read instead of one per connector.
     */
    readonly listWithAccess: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<ConnectorWithAccess>>
    /** Replaces a stored connector (matched by organization and id); `NotFound` when there is none. */
    readonly update: (connector: ConnectorRecord) => Effect.Effect<void, NotFound>
    /** Deletes a connector and its access; `NotFound` when the organization has no such connector. */
    readonly delete: (organizationId: OrganizationId, id: ConnectorId) => Effect.Effect<void, NotFound>
    readonly getAccess: (
      organizationId: OrganizationId,
      id: ConnectorId
    ) => Effect.Effect<Option.Option<ConnectorAccess>>
    /** Replaces a connector's access in one step (no reader sees a partial grant list). */
    readonly setAccess: (
      organizationId: OrganizationId,
      id: ConnectorId,
      access: ConnectorAccess
    ) => Effect.Effect<void, NotFound>
  }
}

/**
 * A connector and who may use it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectorWithAccess {
  readonly connector: ConnectorRecord
  readonly access: ConnectorAccess
}

interface Tables {
  readonly lastId: number
  readonly connectors: HashMap.HashMap<ConnectorId, ConnectorRecord>
  readonly access: HashMap.HashMap<ConnectorId, ConnectorAccess>
}

const byId = Order.mapInput(Order.number, (connector: ConnectorRecord) => connector.id)

/**
 * Connectors in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ConnectorRepo, never, MemoryState> = Layer.effect(
  ConnectorRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({ lastId: 0, connectors: HashMap.empty(), access: HashMap.empty() })

    const find = (tables: Tables, organizationId: OrganizationId, id: ConnectorId) =>
      HashMap.get(tables.connectors, id).pipe(Option.filter((c) => c.organization_id === organizationId))

    const get = (organizationId: OrganizationId, id: ConnectorId) =>
      state.run(Effect.map(Ref.get(table), (tables) => find(tables, organizationId, id)))

    const notFound = (id: ConnectorId) => new NotFound({ message: `connector ${id} not found` })

    const whenFound = (
      organizationId: OrganizationId,
      id: ConnectorId,
      f: (tables: Tables) => Tables
    ): Effect.Effect<void, NotFound> =>
      state.run(
        Effect.flatMap(Ref.get(table), (tables) =>
          Option.isSome(find(tables, organizationId, id)) ? Ref.set(table, f(tables)) : Effect.fail(notFound(id)))
      )

    const inOrganization = (tables: Tables, organizationId: OrganizationId) =>
      Arr.sort(
        Array.from(HashMap.values(tables.connectors)).filter((c) => c.organization_id === organizationId),
        byId
      )

    return {
      create: (connector, access) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) => {
          const id = ConnectorId.make(tables.lastId + 1)
          const record = new ConnectorRecord({ ...connector, id })
          return Effect.as(
            Ref.set(table, {
              lastId: id,
              connectors: HashMap.set(tables.connectors, id, record),
              access: HashMap.set(tables.access, id, access)
            }),
            record
          )
        })),

      get,
      getForUpdate: get,

      list: (organizationId) =>
        state.run(Effect.map(Ref.get(table), (tables) => inOrganization(tables, organizationId))),

      listWithAccess: (organizationId) =>
        state.run(
          Effect.map(Ref.get(table), (tables) =>
            Arr.filterMap(inOrganization(tables, organizationId), (connector) =>
              Option.map(HashMap.get(tables.access, connector.id), (access) => ({ connector, access }))))
        ),

      update: (connector) =>
        whenFound(connector.organization_id, connector.id, (tables) => ({
          ...tables,
          connectors: HashMap.set(tables.connectors, connector.id, connector)
        })),

      delete: (organizationId, id) =>
        whenFound(organizationId, id, (tables) => ({
          ...tables,
          connectors: HashMap.remove(tables.connectors, id),
          access: HashMap.remove(tables.access, id)
        })),

      getAccess: (organizationId, id) =>
        state.run(
          Effect.map(Ref.get(table), (tables) =>
            find(tables, organizationId, id).pipe(Option.flatMap(() => HashMap.get(tables.access, id))))
        ),

      setAccess: (organizationId, id, access) =>
        whenFound(organizationId, id, (tables) => ({ ...tables, access: HashMap.set(tables.access, id, access) }))
    }
  })
)

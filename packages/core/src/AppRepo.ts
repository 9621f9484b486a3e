/**
 * The app repository port.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import type { App } from "./App.js"
import { Conflict } from "./Errors.js"
import type { AppId, OrganizationId } from "./Ids.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores apps.
 *
 * @since 0.1.0
 * @category services
 */
export class AppRepo extends Context.Tag("@sightline/core/AppRepo")<AppRepo, AppRepo.Service>() {}

export declare namespace AppRepo {
  /** App storage. App ids are unique across every organization. */
  export interface Service {
    /** Stores a new app; an id that already exists is a `Conflict`. */
    readonly create: (app: App) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: AppId) => Effect.Effect<Option.Option<App>>
    /** Every app of the organization, newest first (`created_at` desc, then id desc). */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<App>>
    /** Deletes an app; false when there was no such app. */
    readonly delete: (organizationId: OrganizationId, id: AppId) => Effect.Effect<boolean>
  }
}

const newestFirst: Order.Order<App> = Order.reverse(Order.combine(
  Order.mapInput(DateTime.Order, (app: App) => app.created_at),
  Order.mapInput(Order.string, (app: App) => app.id)
))

/**
 * Apps in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<AppRepo, never, MemoryState> = Layer.effect(
  AppRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<AppId, App>())

    const find = (rows: HashMap.HashMap<AppId, App>, organizationId: OrganizationId, id: AppId) =>
      HashMap.get(rows, id).pipe(Option.filter((row) => row.organization_id === organizationId))

    return AppRepo.of({
      create: (app) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), app.id)) {
            return yield* new Conflict({ message: `an app with id ${app.id} already exists` })
          }
          yield* Ref.update(table, HashMap.set(app.id, app))
        })),
      get: (organizationId, id) => state.run(Effect.map(Ref.get(table), (rows) => find(rows, organizationId, id))),
      list: (organizationId) =>
        state.run(
          Effect.map(Ref.get(table), (rows) =>
            Arr.sort(
              Arr.filter(HashMap.values(rows), (row) => row.organization_id === organizationId),
              newestFirst
            ))
        ),
      delete: (organizationId, id) =>
        state.run(Ref.modify(table, (rows) =>
          Option.isSome(find(rows, organizationId, id))
            ? [true, HashMap.remove(rows, id)]
            : [false, rows]))
    })
  })
)

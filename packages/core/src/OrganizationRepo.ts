/**
 * The organization repository port.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { OrganizationId } from "./Ids.js"
import type { Organization } from "./Organization.js"
import * as OrganizationSettings from "./OrganizationSettings.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores organizations.
 *
 * @since 0.1.0
 * @category services
 */
export class OrganizationRepo extends Context.Tag("@sightline/core/OrganizationRepo")<
  OrganizationRepo,
  OrganizationRepo.Service
>() {}

export declare namespace OrganizationRepo {
  /** Organization storage. */
  export interface Service {
    readonly create: (organization: Organization) => Effect.Effect<void>
    readonly get: (id: OrganizationId) => Effect.Effect<Option.Option<Organization>>
    /** Every organization, oldest first, ties broken by id (the ops CLI; `pnpm start` checks for an empty store). */
    readonly list: Effect.Effect<ReadonlyArray<Organization>>
    /** The organization's settings (the defaults for those its admins never changed). */
    readonly settings: (id: OrganizationId) => Effect.Effect<OrganizationSettings.OrganizationSettings>
    /** Changes the settings given, atomically against concurrent changes of others, and answers them all. */
    readonly updateSettings: (
      id: OrganizationId,
      update: OrganizationSettings.UpdateOrganizationSettings
    ) => Effect.Effect<OrganizationSettings.OrganizationSettings>
  }
}

/**
 * Organizations in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<OrganizationRepo, never, MemoryState> = Layer.effect(
  OrganizationRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<OrganizationId, Organization>())
    const changed = yield* state.table(HashMap.empty<OrganizationId, OrganizationSettings.UpdateOrganizationSettings>())
    const settings = (id: OrganizationId) =>
      Effect.map(
        Ref.get(changed),
        (rows) => OrganizationSettings.fromStored(Option.getOrUndefined(HashMap.get(rows, id)))
      )
    return {
      create: (organization) => state.run(Ref.update(table, HashMap.set(organization.id, organization))),
      get: (id) => state.run(Effect.map(Ref.get(table), HashMap.get(id))),
      list: state.run(
        Effect.map(
          Ref.get(table),
          (rows) =>
            Array.from(HashMap.values(rows)).sort((a, b) =>
              a.created_at.epochMillis - b.created_at.epochMillis || (a.id < b.id ? -1 : 1)
            )
        )
      ),
      settings: (id) => state.run(settings(id)),
      updateSettings: (id, update) =>
        state.run(
          Effect.zipRight(
            Ref.update(changed, (rows) =>
              HashMap.set(rows, id, { ...Option.getOrElse(HashMap.get(rows, id), () => ({})), ...update })),
            settings(id)
          )
        )
    }
  })
)

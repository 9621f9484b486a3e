/**
 * The organization's settings use cases (`GET`/`PATCH /v2/organization/settings`): admins read them
 * with `organization:read` and change them with `organization:write`; every change is audited with
 * what it set.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Auditor } from "./Auditor.js"
import { enforce } from "./Decision.js"
import type { PermissionDenied, Unauthenticated } from "./Errors.js"
import { OrganizationRepo } from "./OrganizationRepo.js"
import type * as OrganizationSettings from "./OrganizationSettings.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The organization's settings use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Settings extends Context.Tag("@sightline/core/Settings")<Settings, Settings.Service>() {}

export declare namespace Settings {
  /** Reading and changing the caller's organization's settings. */
  export interface Service {
    /** Every setting of the caller's organization (`organization:read`). */
    readonly get: (
      principal: Policy.Principal
    ) => Effect.Effect<OrganizationSettings.OrganizationSettings, Unauthenticated | PermissionDenied>
    /** Changes the settings given (`organization:write`) and answers them all. */
    readonly update: (
      principal: Policy.Principal,
      update: OrganizationSettings.UpdateOrganizationSettings
    ) => Effect.Effect<OrganizationSettings.OrganizationSettings, Unauthenticated | PermissionDenied>
  }
}

/**
 * Builds the settings use cases over the `OrganizationRepo` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const organizations = yield* OrganizationRepo
  const auditor = yield* Auditor
  const tx = yield* Transaction

  const get = Traced.fn("Settings.get")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    return yield* organizations.settings(principal.organizationId)
  })

  const update = Traced.fn("Settings.update")(
    function*(principal: Policy.Principal, update: OrganizationSettings.UpdateOrganizationSettings) {
      yield* enforce(Policy.requirePermission(principal, "organization:write"))
      return yield* tx.withTransaction(Effect.gen(function*() {
        const settings = yield* organizations.updateSettings(principal.organizationId, update)
        yield* auditor.recordBy(principal, {
          action: "organization.settings_update",
          resourceType: "organization",
          resourceId: principal.organizationId,
          details: { ...update }
        })
        return settings
      }))
    }
  )

  return Settings.of({ get, update })
})

/**
 * The settings use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Settings, make)

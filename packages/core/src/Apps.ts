/**
 * The apps use cases: creating, reading (`GetApp` on the Connect surface), listing and deleting
 * apps, the code and files a chat built over some connectors.
 *
 * Apps have no sharing model of their own: an app is visible across its organization to those who
 * can reach every connector it reads (the policy engine's agent rule, `Policy.agentVisible`, since an
 * app shows what it read from them), and only its owner or an admin may change it. Apps are chat
 * artefacts, so they take the `chat` permissions: `chat:read` to see, `chat:write` to create or delete.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as App from "./App.js"
import { AppRepo } from "./AppRepo.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as Decision from "./Decision.js"
import { type InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { AppId } from "./Ids.js"
import { policyAccess, requireUsable } from "./internal/connectorUse.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * The apps use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Apps extends Context.Tag("@sightline/core/Apps")<Apps, Apps.Service>() {}

export declare namespace Apps {
  /** The operations on apps. The caller comes first; an app of another organization is `NotFound`. */
  export interface Service {
    /**
     * Creates an app (`chat:write`) owned by the caller. Every data source must be a connector the
     * caller may use, else `InvalidRequest`.
     */
    readonly create: (
      principal: Policy.Principal,
      request: App.CreateRequest
    ) => Effect.Effect<App.View, Unauthenticated | PermissionDenied | InvalidRequest>
    /** `GetApp` (`chat:read`): the app and whether the caller may change it (its owner, or an admin). */
    readonly get: (
      principal: Policy.Principal,
      request: App.GetAppRequest
    ) => Effect.Effect<App.GetAppResponse, Unauthenticated | PermissionDenied | NotFound>
    /** The apps the caller can see (`chat:read`), newest first. */
    readonly list: (principal: Policy.Principal) => Effect.Effect<App.ListResponse, Unauthenticated | PermissionDenied>
    /** Deletes an app (`chat:write`, and its owner or an admin). */
    readonly delete: (
      principal: Policy.Principal,
      id: AppId
    ) => Effect.Effect<App.DeleteResponse, Unauthenticated | PermissionDenied | NotFound>
  }
}

/**
 * May the caller change the app (`chat:write`, and its owner or an admin)? Ownership counts under any
 * credential; the admin counts because apps have no grants, so without it an app whose owner left
 * could never be removed.
 *
 * @since 0.1.0
 * @category utils
 */
export const canChange = (principal: Policy.Principal, app: App.App): Policy.PermissionDecision => {
  const owns = Option.contains(
    Policy.objectAccess(
      principal,
      { organizationId: app.organization_id, ownerId: app.owner_id, isPublic: false, grants: [] },
      // Ownership does not expire, so the instant does not matter.
      DateTime.unsafeMake(0)
    ),
    "owner"
  )
  return Decision.all([
    Policy.requirePermission(principal, "chat:write"),
    owns || Policy.isAdmin(principal)
      ? Decision.allow
      : Decision.deny("permission_denied", "permission denied: only the app's owner or an admin may change it")
  ])
}

/**
 * Builds the apps use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const apps = yield* AppRepo
  const connectorRepo = yield* ConnectorRepo
  const ids = yield* IdGenerator

  // The decision of whether an app is visible: the agent rule over its data sources.
  const visibility = Effect.fnUntraced(function*(principal: Policy.Principal) {
    const now = yield* DateTime.now
    const reachable = (yield* connectorRepo.listWithAccess(principal.organizationId)).map(({ access, connector }) =>
      policyAccess(connector, access, now)
    )
    return (app: App.App): Decision.Decision<"unauthenticated" | "not_found"> =>
      Policy.agentVisible(
        principal,
        { organizationId: app.organization_id, connectorIds: app.data_sources },
        reachable,
        now
      )
  })

  // A visible app, or `NotFound` (checked before the permission, so an invisible app reveals nothing).
  const load = Effect.fnUntraced(function*(principal: Policy.Principal, id: AppId) {
    const app = yield* apps.get(principal.organizationId, id)
    if (Option.isNone(app)) return yield* new NotFound()
    const visible = yield* visibility(principal)
    yield* Decision.enforce(visible(app.value))
    return app.value
  })

  const create = Traced.fn("Apps.create")(function*(principal: Policy.Principal, request: App.CreateRequest) {
    yield* Decision.enforce(Policy.requirePermission(principal, "chat:write"))
    const dataSources = Arr.dedupe(request.dataSources ?? [])
    yield* requireUsable(connectorRepo, principal, dataSources, yield* DateTime.now, "dataSources")
    const app = App.make({
      id: AppId.make(yield* ids.uuid),
      organizationId: principal.organizationId,
      ownerId: principal.memberId,
      request: { ...request, dataSources },
      at: yield* DateTime.now
    })
    // A fresh id cannot clash; if it did, the store is broken.
    yield* Effect.orDie(apps.create(app))
    return App.toView(app)
  })

  const get = Traced.fn("Apps.get")(function*(principal: Policy.Principal, request: App.GetAppRequest) {
    const app = yield* load(principal, request.appId)
    yield* Decision.enforce(Policy.requirePermission(principal, "chat:read"))
    return {
      app: App.toView(app),
      hasWritePermission: Decision.isAllow(canChange(principal, app))
    }
  })

  const list = Traced.fn("Apps.list")(function*(principal: Policy.Principal) {
    yield* Decision.enforce(Policy.requirePermission(principal, "chat:read"))
    const visible = yield* visibility(principal)
    const all = yield* apps.list(principal.organizationId)
    return { apps: all.filter((app) => Decision.isAllow(visible(app))).map(App.toView) }
  })

  const remove = Traced.fn("Apps.delete")(function*(principal: Policy.Principal, id: AppId) {
    const app = yield* load(principal, id)
    yield* Decision.enforce(canChange(principal, app))
    // Gone already (a concurrent delete) reads as not found, like any other missing app.
    if (!(yield* apps.delete(principal.organizationId, id))) return yield* new NotFound()
    return { id, success: true }
  })

  return Apps.of({ create, get, list, delete: remove })
})

/**
 * The apps use cases over `AppRepo`, `ConnectorRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Apps, make)

/**
 * End users' sessions (`EndUser`): a host's backend mints one with its API key for each of its end
 * users, and every request made with it becomes a principal again here.
 *
 * Minting checks that the session only narrows the key: its client attributes add to the key's and
 * never change one, it names only connectors, dashboards and models the key reaches, only origins
 * of the organization's `embed_origins`, and it ends no later than the key. Minting is not audited:
 * a widget renews its session every few minutes, and the key that mints is audited where it was made.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ApiKey from "./ApiKey.js"
import { ApiKeyRepo } from "./ApiKeyRepo.js"
import { keyAuth, principalOf } from "./Auth.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { Dashboards } from "./Dashboards.js"
import { enforce } from "./Decision.js"
import * as EndUser from "./EndUser.js"
import { InvalidRequest, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Model from "./Model.js"
import * as Models from "./Models.js"
import { OrganizationRepo } from "./OrganizationRepo.js"
import * as Policy from "./Policy.js"
import { RoleRepo } from "./RoleRepo.js"
import { SemanticLayer } from "./SemanticLayer.js"
import * as Traced from "./Traced.js"

/**
 * The message of a session whose key, or whose key's owner, no longer works.
 *
 * @since 0.1.0
 * @category constants
 */
export const SESSION_ENDED = "invalid token: the end user's session has ended"

/**
 * A minted session before the http package seals it.
 *
 * @since 0.1.0
 * @category models
 */
export interface MintedClaims {
  readonly claims: EndUser.Claims
  readonly expiresAt: DateTime.Utc
}

/**
 * Minting end users' sessions and reading them back.
 *
 * @since 0.1.0
 * @category services
 */
export class EmbedSessions
  extends Context.Tag("@sightline/core/EmbedSessions")<EmbedSessions, EmbedSessions.Service>()
{}

export declare namespace EmbedSessions {
  /** The end-user session use cases. */
  export interface Service {
    /** `POST /v2/embed/sessions`: a session for one end user, minted by a key (never a session or an end user). */
    readonly mint: (
      principal: Policy.Principal,
      request: EndUser.MintRequest
    ) => Effect.Effect<MintedClaims, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * The principal of a session's verified claims, used from `origin` (the request's `Origin`,
     * absent when it sent none). Its key is read again: a revoked or expired key, or a deleted
     * owner, ends it (`Unauthenticated`). An origin the session does not name, or one the
     * organization no longer lists in `embed_origins`, is `PermissionDenied`.
     */
    readonly principalOf: (
      claims: EndUser.Claims,
      origin: string | undefined
    ) => Effect.Effect<Policy.Principal, Unauthenticated | PermissionDenied>
    /** `GET /v2/embed/session`: what the end user's session reaches, for the widget to offer. */
    readonly info: (principal: Policy.Principal) => Effect.Effect<EndUser.SessionInfo, PermissionDenied>
  }
}

const onlyKeys = new PermissionDenied({
  message: "permission denied: end users' sessions are minted by a host's backend with its API key"
})

/** The key's attributes with the end user's added; a field the key sets cannot be given again. */
const mergedAttributes = (
  keyJson: string | undefined,
  added: Readonly<Record<string, unknown>> | undefined
): Effect.Effect<string, InvalidRequest> => {
  const fixed = keyJson === undefined || keyJson === "" ? {} : JSON.parse(keyJson) as Record<string, unknown>
  const clashes = Object.keys(added ?? {}).filter((field) => Object.hasOwn(fixed, field))
  if (clashes.length > 0) {
    return Effect.fail(
      new InvalidRequest({
        message: `client_attributes: ${clashes.join(", ")} ${clashes.length === 1 ? "is" : "are"} set by the key ` +
          "that mints the session and cannot be changed"
      })
    )
  }
  const json = JSON.stringify({ ...fixed, ...added })
  return json.length > ApiKey.CLIENT_ID_MAX_LENGTH
    ? Effect.fail(
      new InvalidRequest({
        message: `client_attributes: with the key's, they take at most ${ApiKey.CLIENT_ID_MAX_LENGTH} characters`
      })
    )
    : Effect.succeed(json)
}

/**
 * Builds the use cases over the repositories, the dashboards, the semantic layer and the model
 * catalogue in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const keys = yield* ApiKeyRepo
  const members = yield* MemberRepo
  const roles = yield* RoleRepo
  const organizations = yield* OrganizationRepo
  const connectors = yield* ConnectorRepo
  const dashboards = yield* Dashboards
  const semantic = yield* SemanticLayer
  const catalogues = yield* Model.ModelCatalogue

  const mint = Traced.fn("EmbedSessions.mint")(function*(principal: Policy.Principal, request: EndUser.MintRequest) {
    const auth = principal.auth
    if (auth._tag !== "ApiKey" || auth.endUser !== undefined) return yield* onlyKeys
    yield* enforce(Policy.requirePermission(principal, "chat:write"))
    const key = yield* keys.get(principal.organizationId, auth.keyId)
    if (Option.isNone(key)) return yield* new Unauthenticated()
    const now = yield* DateTime.now
    const attributes = yield* mergedAttributes(auth.clientId, request.client_attributes)

    const allowed = (yield* organizations.settings(principal.organizationId)).embed_origins
    const foreign = request.allowed_origins.filter((origin) => !allowed.includes(origin))
    if (foreign.length > 0) {
      return yield* new InvalidRequest({
        message: `allowed_origins: ${foreign.join(", ")} ${foreign.length === 1 ? "is" : "are"} not among the ` +
          "organization's embed_origins (an admin adds them in the organization's settings)"
      })
    }
    if (request.connectors !== undefined) {
      yield* ConnectorUse.requireUsable(connectors, principal, request.connectors, now, "connectors")
    }
    for (const name of request.dashboards ?? []) {
      yield* Effect.catchTag(
        dashboards.get(principal, name),
        "NotFound",
        () => new InvalidRequest({ message: `dashboards: no dashboard named ${name} that this key may read` })
      )
    }
    if (request.models !== undefined) {
      const catalogue = Models.toPolicyCatalogue(yield* catalogues.catalogue(principal.organizationId))
      const usable = Policy.allowedModels(principal, catalogue).map((model) => model.id)
      const unknown = request.models.filter((model) => !usable.includes(model))
      if (unknown.length > 0) {
        return yield* new InvalidRequest({ message: `models: ${unknown.join(", ")} not available to this key` })
      }
    }

    const wanted = DateTime.addDuration(now, Duration.seconds(request.ttl_seconds ?? EndUser.ttlSeconds.default))
    const expiresAt = DateTime.min(wanted, key.value.expires_at)
    const claims: EndUser.Claims = {
      organization_id: principal.organizationId,
      member_id: principal.memberId,
      key_id: auth.keyId,
      external_user_id: request.external_user_id,
      client_attributes: attributes,
      ...(request.connectors === undefined ? {} : { connectors: request.connectors }),
      ...(request.dashboards === undefined ? {} : { dashboards: request.dashboards }),
      ...(request.models === undefined ? {} : { models: request.models }),
      origins: request.allowed_origins,
      exp: Math.floor(DateTime.toEpochMillis(expiresAt) / 1000)
    }
    return { claims, expiresAt }
  })

  // Untraced: it runs on every request an end user makes, inside the request's own span.
  const principalOfClaims = Effect.fnUntraced(function*(claims: EndUser.Claims, origin: string | undefined) {
    const now = yield* DateTime.now
    if (DateTime.toEpochMillis(now) >= claims.exp * 1000) {
      return yield* new Unauthenticated({ message: "invalid token: expired" })
    }
    if (origin === undefined || !claims.origins.includes(origin)) {
      return yield* new PermissionDenied({
        message: `permission denied: this end user's session is not for use from ${
          origin ?? "a page without an origin"
        }`
      })
    }
    const key = yield* keys.get(claims.organization_id, claims.key_id)
    if (
      Option.isNone(key) || ApiKey.statusAt(key.value, now) !== "active" || key.value.member_id !== claims.member_id
    ) {
      return yield* new Unauthenticated({ message: SESSION_ENDED })
    }
    const owner = Option.filter(
      yield* members.get(claims.organization_id, claims.member_id),
      (member) => member.deleted_at === undefined
    )
    if (Option.isNone(owner)) return yield* new Unauthenticated({ message: SESSION_ENDED })
    // An admin who takes an origin off the list ends its sessions at once.
    const settings = yield* organizations.settings(claims.organization_id)
    if (!settings.embed_origins.includes(origin)) {
      return yield* new PermissionDenied({
        message: `permission denied: ${origin} is no longer among the organization's embed_origins`
      })
    }
    const held = yield* roles.heldBy(claims.organization_id, claims.member_id)
    return principalOf(
      owner.value,
      held,
      keyAuth(key.value, {
        scope: EndUser.scopeOf(claims, key.value.client_id),
        clientAttributesJson: claims.client_attributes
      })
    )
  })

  const info = Traced.fn("EmbedSessions.info")(function*(principal: Policy.Principal) {
    const endUser = Policy.endUserOf(principal)
    if (endUser === undefined) {
      return yield* new PermissionDenied({ message: "permission denied: this describes an end user's session" })
    }
    const reachable = yield* ConnectorUse.usable(connectors, principal, principal.organizationId, yield* DateTime.now)
    const models = yield* semantic.modelsFor(principal, reachable)
    const verified = models.flatMap((governing) =>
      governing._tag === "Right" ? governing.right.model.verifiedQueries : []
    )
    // Onboarding questions first, as the library marks them; each question once.
    const suggestions = [
      ...new Set([
        ...verified.filter((query) => query.use_as_onboarding_question === true).map((query) => query.question),
        ...verified.map((query) => query.question)
      ])
    ]
    const listed = yield* Effect.orDie(dashboards.list(principal))
    return {
      external_user_id: endUser.externalUserId,
      connectors: reachable.map((connector) => ({ id: connector.id, name: connector.config.name })),
      dashboards: listed.dashboards.flatMap((dashboard) =>
        dashboard.title === undefined ? [] : [{ name: dashboard.name, title: dashboard.title }]
      ),
      suggestions
    }
  })

  return EmbedSessions.of({ mint, principalOf: principalOfClaims, info })
})

/**
 * The use cases over the services in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(EmbedSessions, make)

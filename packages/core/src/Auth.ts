/**
 * Authentication: turns a credential into the `Policy.Principal` every use case takes first.
 *
 * Two credentials exist: an API key (the bearer secret, looked up by its hash) and a session (a JWT
 * the http package has already verified; its `sub` is the member id). Either way the principal
 * carries the member's LIVE roles, read on every call: the key model needs it, because removing a
 * role from a member must remove it from every key at once (`Policy.effectiveRoles` intersects a
 * key's snapshot with these roles), and a soft-deleted member must stop at once.
 *
 * Failures are `Unauthenticated` with the seed's troubleshooting texts, so a client can tell a
 * malformed value (`invalid API key format`) from one that does not (or no longer) work.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ApiKey from "./ApiKey.js"
import { ApiKeyRepo } from "./ApiKeyRepo.js"
import type * as EndUser from "./EndUser.js"
import { Unauthenticated } from "./Errors.js"
import type { MemberId, OrganizationId } from "./Ids.js"
import type { Member } from "./Member.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Policy from "./Policy.js"
import { type RoleRecord, toRoleInfo } from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import * as Secret from "./Secret.js"
import { sessionEnded } from "./Session.js"
import { SessionRepo } from "./SessionRepo.js"

/**
 * The message of a value that is not the issued base64 shape (seed troubleshooting).
 *
 * @since 0.1.0
 * @category constants
 */
export const INVALID_FORMAT = "invalid API key format"

/**
 * The message of an unknown or revoked key, or one whose owner was deleted (seed troubleshooting).
 *
 * @since 0.1.0
 * @category constants
 */
export const KEY_NOT_FOUND = "invalid API key: API key not found"

/**
 * The message of a key past its `expires_at` (the seed has no text for it; see docs/decisions.md).
 *
 * @since 0.1.0
 * @category constants
 */
export const KEY_EXPIRED = "invalid API key: API key expired"

/**
 * Authenticates callers and builds their principals.
 *
 * @since 0.1.0
 * @category services
 */
export class Auth extends Context.Tag("@sightline/core/Auth")<Auth, Auth.Service>() {}

export declare namespace Auth {
  /** Authentication of API keys and sessions, and the live roles principals are built from. */
  export interface Service {
    /**
     * The principal of a presented API key (the bearer token or the `svc_api_key` header, as sent).
     * Fails with `invalid API key format` for a value that is not an issued secret, and with
     * `invalid API key: API key not found` for an unknown or revoked key or a deleted owner.
     */
    readonly authenticateApiKey: (presented: string) => Effect.Effect<Policy.Principal, Unauthenticated>
    /**
     * The principal of a verified session (JWT `sub` = member id). An unknown or soft-deleted
     * member is `Unauthenticated` (a still-valid token must not outlive its member), and so is a
     * `sessionId` (an access token of this deployment's sign-in) whose session has ended: signing
     * out or setting a password stops the tokens at once, not when they expire.
     */
    readonly sessionPrincipal: (
      organizationId: OrganizationId,
      memberId: MemberId,
      sessionId?: string
    ) => Effect.Effect<Policy.Principal, Unauthenticated>
    /**
     * The roles a member holds right now: direct assignments plus roles granted through its groups,
     * each once, in the organization's role order (oldest first). Empty for an unknown member.
     */
    readonly liveRoles: (
      organizationId: OrganizationId,
      memberId: MemberId
    ) => Effect.Effect<ReadonlyArray<RoleRecord>>
  }
}

/**
 * The principal of a member acting with a credential, given its live roles. The role order is the
 * organization's (oldest first): it decides which role's default model wins, so it must be stable.
 *
 * @since 0.1.0
 * @category utils
 */
export const principalOf = (
  member: Member,
  roles: ReadonlyArray<RoleRecord>,
  auth: Policy.Auth
): Policy.Principal => ({
  organizationId: member.organization_id,
  memberId: member.id,
  email: member.email,
  isServiceAccount: member.is_service_account,
  deleted: member.deleted_at !== undefined,
  roles: roles.map(toRoleInfo),
  auth
})

/**
 * The policy credential of a stored key: its snapshot, its legacy flag and its member access; with
 * an end user's session minted by the key, that session's scope and client attributes.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyAuth = (
  record: ApiKey.ApiKeyRecord,
  endUser?: { readonly scope: EndUser.Scope; readonly clientAttributesJson: string }
): Policy.Auth =>
  Policy.ApiKey({
    keyId: record.id,
    assumedRoleIds: record.assumed_roles,
    inheritAllRoles: record.inherit_all_roles,
    fullMemberAccess: record.full_member_access,
    clientId: endUser === undefined ? record.client_id : endUser.clientAttributesJson,
    ...(endUser === undefined ? {} : { endUser: endUser.scope })
  })

/**
 * The roles a member holds right now: direct assignments plus roles granted through its groups,
 * each once, in the organization's role order (oldest first, the stable order
 * `Policy.Principal.roles` asks for). Empty for an unknown member. A soft-deleted member keeps its
 * assignments, so callers decide what a deleted member's roles mean.
 *
 * @since 0.1.0
 * @category utils
 */
export const liveRoles = (
  organizationId: OrganizationId,
  memberId: MemberId
): Effect.Effect<ReadonlyArray<RoleRecord>, never, RoleRepo> =>
  Effect.flatMap(RoleRepo, (roles) => roles.heldBy(organizationId, memberId))

/**
 * Builds the service from the member, role and key repositories and the secret hasher.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const keys = yield* ApiKeyRepo
  const members = yield* MemberRepo
  const hasher = yield* Secret.SecretHasher
  const roles = yield* RoleRepo
  const sessions = yield* SessionRepo
  const rolesOf = roles.heldBy

  // A member that is missing or soft-deleted cannot act, whatever credential it presents.
  const liveMember = (organizationId: OrganizationId, memberId: MemberId) =>
    Effect.map(
      members.get(organizationId, memberId),
      Option.filter((member) => member.deleted_at === undefined)
    )

  // Untraced: it runs on every request, inside the request's own span, and `Effect.fn` would build a
  // span and capture a stack on each call.
  const authenticateApiKey = Effect.fnUntraced(function*(presented: string) {
    // Checked before hashing, so a mistyped or truncated key gets a message that says so.
    if (!Secret.isWellFormed(presented)) return yield* new Unauthenticated({ message: INVALID_FORMAT })
    const hash = yield* hasher.hash(presented)
    // The lookup finds the row through an index; the constant-time comparison is the actual check,
    // so it holds even if a store matched hashes loosely (a collation, a prefix index).
    // The key, its owner and the owner's live roles come in one read (one statement in SQL): this
    // runs on every request, and revocation or a role removed still count from the next one.
    const found = Option.filter(yield* keys.findCredential(hash), ({ key }) => hasher.equals(key.secret_hash, hash))
    if (Option.isNone(found)) return yield* new Unauthenticated({ message: KEY_NOT_FOUND })
    const { key, member, roles } = found.value
    const status = ApiKey.statusAt(key, yield* DateTime.now)
    if (status === "revoked") return yield* new Unauthenticated({ message: KEY_NOT_FOUND })
    if (status === "expired") return yield* new Unauthenticated({ message: KEY_EXPIRED })
    // A member that is missing or soft-deleted cannot act, whatever key it holds.
    const owner = Option.filter(member, (m) => m.deleted_at === undefined)
    if (Option.isNone(owner)) return yield* new Unauthenticated({ message: KEY_NOT_FOUND })
    return principalOf(owner.value, roles, keyAuth(key))
  })

  // Untraced: it runs on every request made with a session (see `authenticateApiKey`).
  const sessionPrincipal = Effect.fnUntraced(
    function*(organizationId: OrganizationId, memberId: MemberId, sessionId?: string) {
      if (
        sessionId !== undefined && !(yield* sessions.isLive(organizationId, memberId, sessionId, yield* DateTime.now))
      ) {
        return yield* new Unauthenticated({ message: sessionEnded })
      }
      const member = yield* liveMember(organizationId, memberId)
      if (Option.isNone(member)) return yield* new Unauthenticated()
      const held = yield* rolesOf(organizationId, memberId)
      return principalOf(member.value, held, Policy.Session())
    }
  )

  return Auth.of({ authenticateApiKey, sessionPrincipal, liveRoles: rolesOf })
})

/**
 * The `Auth` service over the repositories and secret hasher in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Auth,
  never,
  ApiKeyRepo | MemberRepo | RoleRepo | SessionRepo | Secret.SecretHasher
> = Layer.effect(
  Auth,
  make
)

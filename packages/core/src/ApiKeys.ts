/**
 * The API key use cases: create (`POST /v2/api-keys`), list (`GET /v2/api-keys`), rotate
 * (`POST /v2/api-keys/{id}/rotate`), revoke (`DELETE /v2/api-keys/{id}`), and `bootstrap`, the first
 * key of a member minted by the ops CLI (`org create`) where no caller exists yet.
 *
 * The policy engine decides who may mint, list and manage which key (`Policy.canMint`,
 * `canListKeys`, `canManageKey`); the request body's own rules (`inheritAllRoles` versus
 * `assumedRoles`, bounds) are the `ApiKey.CreateApiKey` schema's, already applied by the caller that
 * decoded the body. Every write and its audit entry commit together, and the secret leaves this module
 * only in the response that creates it: records and audit entries hold its hash at most.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiKey from "./ApiKey.js"
import { ApiKeyRepo } from "./ApiKeyRepo.js"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import { Auth, principalOf } from "./Auth.js"
import * as Decision from "./Decision.js"
import { InvalidRequest, NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { ApiKeyId, type MemberId, type OrganizationId } from "./Ids.js"
import { MemberRepo } from "./MemberRepo.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import { SecretHasher } from "./Secret.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * Creates, lists, rotates and revokes API keys.
 *
 * @since 0.1.0
 * @category services
 */
export class ApiKeys extends Context.Tag("@sightline/core/ApiKeys")<ApiKeys, ApiKeys.Service>() {}

export declare namespace ApiKeys {
  /** The API key operations. */
  export interface Service {
    /**
     * Mints a key (`POST /v2/api-keys`): the secret, shown this once, and the record. The body is
     * the decoded `CreateApiKey`; `Policy.canMint` decides the owner and the role snapshot.
     */
    readonly create: (
      principal: Policy.Principal,
      body: ApiKey.CreateApiKey
    ) => Effect.Effect<ApiKey.CreateApiKeyResult, InvalidRequest | PermissionDenied | NotFound | Unauthenticated>
    /** A page of keys (`GET /v2/api-keys`), newest first; never a secret or its hash. */
    readonly list: (
      principal: Policy.Principal,
      query: ApiKey.ListApiKeys
    ) => Effect.Effect<ApiKey.ListApiKeysResponse, InvalidRequest | PermissionDenied | Unauthenticated>
    /**
     * Revokes a key and mints its replacement with the same owner, name, roles, client metadata and
     * member access (`POST /v2/api-keys/{id}/rotate`). A revoked key is `invalid_request`.
     */
    readonly rotate: (
      principal: Policy.Principal,
      id: ApiKeyId
    ) => Effect.Effect<ApiKey.RotateApiKeyResult, InvalidRequest | PermissionDenied | NotFound | Unauthenticated>
    /** Revokes a key (`DELETE /v2/api-keys/{id}`); an already revoked key is `invalid_request`. */
    readonly revoke: (
      principal: Policy.Principal,
      id: ApiKeyId
    ) => Effect.Effect<ApiKey.RevokeApiKeyResult, InvalidRequest | PermissionDenied | NotFound | Unauthenticated>
    /**
     * The first key of a member, for the ops CLI where no caller exists yet: a snapshot of all the
     * member's live roles, with full member access, recorded as a `system` action. An unknown or
     * deleted member is `not_found`; a member without roles is `permission_denied`. The minting
     * rules apply as for `create`, so their other codes stay in the type.
     */
    readonly bootstrap: (
      organizationId: OrganizationId,
      memberId: MemberId,
      name: string
    ) => Effect.Effect<ApiKey.CreateApiKeyResult, InvalidRequest | PermissionDenied | NotFound | Unauthenticated>
  }
}

// The capability table reads a stored key through this view.
const keyInfo = (record: ApiKey.ApiKeyRecord): Policy.KeyInfo => ({
  id: record.id,
  organizationId: record.organization_id,
  ownerId: record.member_id,
  assumedRoleIds: record.assumed_roles,
  inheritAllRoles: record.inherit_all_roles,
  fullMemberAccess: record.full_member_access
})

// What an audit entry says about a key: enough to review who got which reach, never the secret.
const keyDetails = (record: ApiKey.ApiKeyRecord): AuditLog.Details => ({
  member_id: record.member_id,
  name: record.name,
  assumed_roles: record.assumed_roles,
  full_member_access: record.full_member_access,
  expires_at: DateTime.formatIso(record.expires_at)
})

// Which key acted, when the actor authenticated with one (several keys share an owner).
const callerKey = (principal: Policy.Principal): AuditLog.Details =>
  principal.auth._tag === "ApiKey" ? { caller_api_key_id: principal.auth.keyId } : {}

/**
 * Builds the service from the repositories, `Auth`, the secret hasher and the id generator.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const keys = yield* ApiKeyRepo
  const members = yield* MemberRepo
  const auth = yield* Auth
  const hasher = yield* SecretHasher
  const ids = yield* IdGenerator
  const tx = yield* Transaction
  const auditor = yield* Auditor
  const events = yield* OutboundEvents

  const newSecret = Effect.gen(function*() {
    const secret = yield* hasher.generate
    return { secret, hash: yield* hasher.hash(secret) }
  })

  // Ids and secrets are random, so a uniqueness clash on insert is a defect rather than a domain error.
  const store = (record: ApiKey.ApiKeyRecord) => Effect.orDie(keys.create(record))

  // The member a key is minted for, as the policy needs it. A member missing from the caller's
  // organization is presented as deleted, which the policy answers `not_found` only after its
  // `organization:write` check, so a caller without it cannot probe for member ids.
  const targetMember = Effect.fnUntraced(function*(organizationId: OrganizationId, memberId: MemberId) {
    const member = yield* members.get(organizationId, memberId)
    if (Option.isNone(member)) {
      return {
        id: memberId,
        organizationId,
        isServiceAccount: false,
        deleted: true,
        liveRoleIds: []
      } satisfies Policy.TargetMember
    }
    const held = yield* auth.liveRoles(organizationId, memberId)
    return {
      id: memberId,
      organizationId,
      isServiceAccount: member.value.is_service_account,
      deleted: member.value.deleted_at !== undefined,
      liveRoleIds: held.map((role) => role.id)
    } satisfies Policy.TargetMember
  })

  // Mints and stores an approved key with its audit entry, in one transaction.
  const mint = Effect.fnUntraced(function*(options: {
    readonly organizationId: OrganizationId
    readonly minted: Policy.Minted
    readonly createdBy: MemberId
    readonly actor: Pick<AuditLog.RecordInput, "actorId" | "authMethod">
    readonly extraDetails: AuditLog.Details
    readonly name?: string | undefined
    readonly clientId?: string | undefined
    readonly expirySeconds?: number | undefined
    readonly parent?: ApiKey.MintInput["parent"]
  }) {
    const id = ApiKeyId.make(yield* ids.uuid)
    const { hash, secret } = yield* newSecret
    const now = yield* DateTime.now
    const record = ApiKey.mint({
      id,
      organizationId: options.organizationId,
      memberId: options.minted.ownerId,
      createdBy: options.createdBy,
      secretHash: hash,
      now,
      assumedRoles: options.minted.assumedRoleIds,
      fullMemberAccess: options.minted.fullMemberAccess,
      name: options.name,
      clientId: options.clientId,
      expirySeconds: options.expirySeconds,
      parent: options.parent
    })
    yield* tx.withTransaction(Effect.all([
      store(record),
      auditor.record({
        organizationId: options.organizationId,
        ...options.actor,
        action: "api_key.create",
        resourceType: "api_key",
        resourceId: id,
        details: { ...keyDetails(record), ...options.extraDetails }
      }),
      events.publish(options.organizationId, "api_key.created", { api_key_id: id })
    ]))
    return { key: secret, api_key: ApiKey.toWire(record, now) } satisfies ApiKey.CreateApiKeyResult
  })

  const create = Traced.fn("ApiKeys.create")(function*(principal: Policy.Principal, body: ApiKey.CreateApiKey) {
    const target = body.targetMemberId === undefined
      ? undefined
      : yield* targetMember(principal.organizationId, body.targetMemberId)
    const minted = Policy.canMint(principal, {
      assumedRoleIds: body.assumedRoles ?? [],
      inheritAllRoles: body.inheritAllRoles === true,
      targetMember: target,
      fullMemberAccess: body.fullMemberAccess === true
    })
    if (Decision.isDeny(minted)) return yield* Decision.toError(minted)
    // A key minted with a key is its child: it keeps the parent's client metadata (the row-level
    // security a host handed to its end user cannot be shed or swapped by minting), never outlives
    // it, and is revoked with it.
    const parent = principal.auth._tag === "ApiKey"
      ? Option.getOrUndefined(yield* keys.get(principal.organizationId, principal.auth.keyId))
      : undefined
    if (parent !== undefined && parent.client_id !== "" && (body.clientId ?? parent.client_id) !== parent.client_id) {
      return yield* new PermissionDenied({
        message:
          "permission denied: a key minted by a key with a clientId keeps that clientId (omit clientId or repeat it)"
      })
    }
    return yield* mint({
      organizationId: principal.organizationId,
      minted,
      createdBy: principal.memberId,
      actor: { actorId: principal.memberId, authMethod: AuditLog.authMethodOf(principal) },
      extraDetails: callerKey(principal),
      name: body.name,
      clientId: parent !== undefined && parent.client_id !== "" ? parent.client_id : body.clientId,
      expirySeconds: body.expirySeconds,
      parent: parent === undefined ? undefined : { id: parent.id, expiresAt: parent.expires_at }
    })
  })

  const list = Traced.fn("ApiKeys.list")(function*(principal: Policy.Principal, query: ApiKey.ListApiKeys) {
    yield* Decision.enforce(Policy.canListKeys(principal, query.scope))
    const after = query.page_token === undefined
      ? undefined
      : yield* Pagination.decodeCursor(query.page_token, Schema.UUID)
    // Deleted service accounts are included, as `all` includes every owner: their keys stay
    // visible (and revocable) to the administrators who may list them.
    const memberIds = query.scope === "personal"
      ? [principal.memberId]
      : query.scope === "service_accounts"
      ? (yield* members.list(principal.organizationId, { isServiceAccount: true, includeDeleted: true }))
        .map((member) => member.id)
      : undefined
    const page = yield* keys.list(principal.organizationId, {
      limit: query.page_size,
      after,
      memberIds,
      includeRevoked: query.include_revoked
    })
    const now = yield* DateTime.now
    return {
      api_keys: page.items.map((record) => ApiKey.toWire(record, now)),
      ...(page.nextCursor === undefined ? {} : { next_page_token: page.nextCursor })
    } satisfies ApiKey.ListApiKeysResponse
  })

  // Reads the key under a row lock and asks the capability table; must run inside a transaction so
  // that two concurrent rotations (or a rotation and a revocation) of one key queue up.
  const lockManaged = Effect.fnUntraced(function*(principal: Policy.Principal, id: ApiKeyId, action: Policy.KeyAction) {
    yield* Decision.enforce(Policy.authenticated(principal))
    const record = yield* keys.getForUpdate(principal.organizationId, id)
    if (Option.isNone(record)) return yield* new NotFound()
    yield* Decision.enforce(
      Policy.canManageKey(principal, keyInfo(record.value), action)
    )
    return record.value
  })

  const rotate = Traced.fn("ApiKeys.rotate")(function*(principal: Policy.Principal, id: ApiKeyId) {
    // Made before the row is locked: hashing is asynchronous, and the lock should be held briefly.
    const newId = ApiKeyId.make(yield* ids.uuid)
    const { hash, secret } = yield* newSecret
    return yield* tx.withTransaction(Effect.gen(function*() {
      const record = yield* lockManaged(principal, id, "rotate")
      const now = yield* DateTime.now
      const rotation = yield* ApiKey.rotate(record, { newId, newSecretHash: hash, now, rotatedBy: principal.memberId })
      // The row is locked and was just read, so it cannot have vanished.
      yield* Effect.orDie(keys.update(rotation.revoked))
      yield* store(rotation.replacement)
      // The replacement takes over the old key's children, which would otherwise outlive nothing.
      yield* keys.reparent(principal.organizationId, record.id, newId)
      yield* auditor.record({
        ...AuditLog.actorOf(principal),
        action: "api_key.rotate",
        resourceType: "api_key",
        resourceId: record.id,
        details: { ...keyDetails(rotation.replacement), replacement_api_key_id: newId, ...callerKey(principal) }
      })
      yield* events.publish(principal.organizationId, "api_key.created", { api_key_id: newId })
      yield* events.publish(principal.organizationId, "api_key.revoked", { api_key_id: record.id })
      return {
        key: secret,
        api_key: ApiKey.toWire(rotation.replacement, now),
        revoked_api_key_id: record.id
      } satisfies ApiKey.RotateApiKeyResult
    }))
  })

  const revoke = Traced.fn("ApiKeys.revoke")(function*(principal: Policy.Principal, id: ApiKeyId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const record = yield* lockManaged(principal, id, "revoke")
      const now = yield* DateTime.now
      const revoked = yield* ApiKey.revoke(record, now)
      yield* Effect.orDie(keys.update(revoked))
      const children = yield* keys.revokeDescendants(principal.organizationId, record.id, now)
      yield* auditor.record({
        ...AuditLog.actorOf(principal),
        action: "api_key.revoke",
        resourceType: "api_key",
        resourceId: record.id,
        details: {
          member_id: record.member_id,
          name: record.name,
          ...(children.length === 0 ? {} : { revoked_descendants: children }),
          ...callerKey(principal)
        }
      })
      for (const revokedId of [record.id, ...children]) {
        yield* events.publish(principal.organizationId, "api_key.revoked", { api_key_id: revokedId })
      }
      return { id: record.id, success: true } satisfies ApiKey.RevokeApiKeyResult
    }))
  })

  const bootstrap = Traced.fn("ApiKeys.bootstrap")(
    function*(organizationId: OrganizationId, memberId: MemberId, name: string) {
      const validName = yield* Schema.decode(ApiKey.ApiKeyName)(name).pipe(
        Effect.mapError((error) => new InvalidRequest({ message: error.message }))
      )
      const member = Option.filter(yield* members.get(organizationId, memberId), (m) => m.deleted_at === undefined)
      if (Option.isNone(member)) return yield* new NotFound()
      // The member mints its own key as a session would: the policy resolves the snapshot (all the
      // live roles) and refuses a member with none, so the CLI follows the API's rules.
      const self = principalOf(member.value, yield* auth.liveRoles(organizationId, memberId), Policy.Session())
      // Full member access: this is the organization's root credential, and a key without it could
      // never mint one with it (`canMint`), which would leave a session as the only way to get one.
      const minted = Policy.canMint(self, { assumedRoleIds: [], inheritAllRoles: true, fullMemberAccess: true })
      if (Decision.isDeny(minted)) return yield* Decision.toError(minted)
      return yield* mint({
        organizationId,
        minted,
        createdBy: memberId,
        actor: { authMethod: "system" },
        extraDetails: {},
        name: validName
      })
    }
  )

  return ApiKeys.of({ create, list, rotate, revoke, bootstrap })
})

/**
 * The `ApiKeys` service over the ports in context and `Auth`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ApiKeys,
  never,
  ApiKeyRepo | MemberRepo | Auditor | Auth | SecretHasher | IdGenerator | Transaction | OutboundEvents
> = Layer.effect(ApiKeys, make)

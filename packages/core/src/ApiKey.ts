/**
 * API keys: the create body and its rules, the wire record, the stored record, list and result
 * shapes, and the key lifecycle (mint, expire, revoke, rotate) as pure functions.
 *
 * Who may mint, list, revoke or rotate which key is the policy engine's business (`Policy.ts`); this
 * module only says what a valid key and a valid transition are.
 *
 * Status is never stored: a key is `revoked` once `revoked_at` is set, `expired` once `expires_at`
 * has passed, and `active` otherwise, so expiry needs no background job and cannot drift.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { InvalidRequest } from "./Errors.js"
import { ApiKeyId, MemberId, OrganizationId, RoleId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { SecretHash } from "./Secret.js"

/**
 * How long a key lives when `expirySeconds` is omitted (api-surface: 90 days, so `expires_at` is always set).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_EXPIRY: Duration.Duration = Duration.days(90)

/**
 * The longest `expirySeconds` accepted: ten 365-day years.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_EXPIRY_SECONDS = 10 * 365 * 24 * 60 * 60

/**
 * The longest display name accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME_MAX_LENGTH = 200

/**
 * The longest `clientId` accepted (its fields are bound as SQL parameters on every RLS query).
 *
 * @since 0.1.0
 * @category constants
 */
export const CLIENT_ID_MAX_LENGTH = 4096

/**
 * The most roles a key can assume.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ASSUMED_ROLES = 100

/**
 * The status of a key: `active`, `expired` (past `expires_at`) or `revoked`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeyStatus = Schema.Literal("active", "expired", "revoked")
export type ApiKeyStatus = typeof ApiKeyStatus.Type

/**
 * `expirySeconds`: a positive whole number of seconds, at most `MAX_EXPIRY_SECONDS`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExpirySeconds = Schema.Int.pipe(
  Schema.positive({ message: () => "expirySeconds must be a positive integer" }),
  Schema.lessThanOrEqualTo(MAX_EXPIRY_SECONDS, {
    message: () => `expirySeconds must be at most ${MAX_EXPIRY_SECONDS} (10 years)`
  })
)

const isJsonObjectText = (text: string): boolean =>
  Option.exists(Schema.decodeUnknownOption(Schema.parseJson())(text), Predicate.isRecord)

/**
 * `clientId`: the client metadata as a JSON-encoded object string. Row-level security reads its
 * fields (`_svc.client_attributes_json.<field>`), so a string that is not an object would make every
 * such read fail later; it is rejected up front. The string is stored exactly as sent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ClientId = Schema.String.pipe(
  Schema.maxLength(CLIENT_ID_MAX_LENGTH, {
    message: () => `clientId must be at most ${CLIENT_ID_MAX_LENGTH} characters`
  }),
  Schema.filter(isJsonObjectText, {
    message: () => "clientId must be a JSON-encoded object string",
    jsonSchema: { pattern: "^\\s*\\{" }
  })
)

/**
 * A key's display name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeyName = Schema.String.pipe(
  Schema.maxLength(NAME_MAX_LENGTH, { message: () => `name must be at most ${NAME_MAX_LENGTH} characters` })
)

/**
 * `assumedRoles`: distinct role ids, at most `MAX_ASSUMED_ROLES`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssumedRoles = Schema.Array(RoleId).pipe(
  Schema.maxItems(MAX_ASSUMED_ROLES, { message: () => `assumedRoles may hold at most ${MAX_ASSUMED_ROLES} roles` }),
  Schema.filter((roles) => Arr.dedupe(roles).length === roles.length, {
    message: () => "assumedRoles must not repeat a role"
  })
)

/**
 * The body of `POST /v2/api-keys` (camelCase, as the seed has it).
 *
 * Rules checked here: `inheritAllRoles` must be true when `assumedRoles` is empty or absent, and may
 * not be true together with a non-empty `assumedRoles` (the two would contradict each other).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateApiKey = Schema.Struct({
  expirySeconds: Schema.optional(ExpirySeconds),
  assumedRoles: Schema.optional(AssumedRoles),
  inheritAllRoles: Schema.optional(Schema.Boolean),
  name: Schema.optional(ApiKeyName),
  targetMemberId: Schema.optional(MemberId),
  clientId: Schema.optional(ClientId),
  fullMemberAccess: Schema.optional(Schema.Boolean)
}).pipe(
  Schema.filter((body) => {
    const selected = body.assumedRoles !== undefined && body.assumedRoles.length > 0
    if (!selected && body.inheritAllRoles !== true) {
      return { path: ["inheritAllRoles"], message: "inheritAllRoles must be true when assumedRoles is empty" }
    }
    if (selected && body.inheritAllRoles === true) {
      return { path: ["inheritAllRoles"], message: "inheritAllRoles cannot be combined with a non-empty assumedRoles" }
    }
    return true
  }, {
    // Inside `allOf`: an `anyOf` of its own would replace the object's schema instead of adding to it.
    jsonSchema: {
      allOf: [{
        anyOf: [
          {
            required: ["assumedRoles"],
            properties: { assumedRoles: { minItems: 1 }, inheritAllRoles: { const: false } }
          },
          {
            required: ["inheritAllRoles"],
            properties: { assumedRoles: { maxItems: 0 }, inheritAllRoles: { const: true } }
          }
        ]
      }]
    }
  }),
  Schema.annotations({ identifier: "CreateApiKey" })
)
export type CreateApiKey = typeof CreateApiKey.Type

/**
 * An API key as served (`api_key` in responses). Never carries the secret or its hash.
 *
 * `name` and `client_id` are `""` when unset (the seed marks neither as omitted when unset).
 *
 * @since 0.1.0
 * @category models
 */
export class ApiKey extends Schema.Class<ApiKey>("@sightline/core/ApiKey")({
  id: ApiKeyId,
  /** The owner: the member the key authenticates as. */
  member_id: MemberId,
  name: Schema.String,
  client_id: Schema.String,
  /** The roles snapshot taken at creation; intersected with the owner's live roles on every request. */
  assumed_roles: Schema.Array(RoleId),
  /** A legacy "All roles" key: it follows the owner's live roles and ignores `assumed_roles`. */
  inherit_all_roles: Schema.Boolean,
  /** Whether the owner's directly shared objects stay reachable (still capped by the roles). */
  full_member_access: Schema.Boolean,
  status: ApiKeyStatus,
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  /** When the key was revoked (directly or by rotation); omitted while it is not. */
  revoked_at: Schema.optional(Schema.DateTimeUtc)
}) {}

/**
 * An API key as stored: the served fields (without the derived `status`) plus internal ones.
 *
 * @since 0.1.0
 * @category models
 */
export class ApiKeyRecord extends Schema.Class<ApiKeyRecord>("@sightline/core/ApiKeyRecord")({
  ...Struct.omit(ApiKey.fields, "status"),
  organization_id: OrganizationId,
  /** SHA-256 of the secret (hex); the only trace of the secret that is kept. */
  secret_hash: SecretHash,
  /** The member who minted the key (the owner itself, or an admin minting for a service account). */
  created_by: MemberId,
  /** The key this one replaced, when it was minted by a rotation. */
  rotated_from: Schema.optional(ApiKeyId),
  /**
   * The key that minted this one (a key minted with a key, not a session): revoking it revokes this
   * one, and this one never outlives it nor sheds its client metadata.
   */
  parent_key_id: Schema.optional(ApiKeyId)
}) {}

/**
 * The status of a key at `now`. A revoked key stays `revoked` after it would have expired.
 *
 * @since 0.1.0
 * @category utils
 */
export const statusAt = (record: ApiKeyRecord, now: DateTime.Utc): ApiKeyStatus =>
  record.revoked_at !== undefined
    ? "revoked"
    : DateTime.lessThan(now, record.expires_at)
    ? "active"
    : "expired"

/**
 * The served form of a stored key at `now`.
 *
 * @since 0.1.0
 * @category utils
 */
export const toWire = (record: ApiKeyRecord, now: DateTime.Utc): ApiKey =>
  new ApiKey({
    ...Struct.omit(record, "organization_id", "secret_hash", "created_by", "rotated_from", "parent_key_id"),
    status: statusAt(record, now)
  }, true)

/**
 * What minting a key needs, after policy has approved it (in-process input, so camelCase).
 *
 * @since 0.1.0
 * @category models
 */
export interface MintInput {
  readonly id: ApiKeyId
  readonly organizationId: OrganizationId
  /** The owner. */
  readonly memberId: MemberId
  /** The member who asked for the key. */
  readonly createdBy: MemberId
  readonly secretHash: SecretHash
  readonly now: DateTime.Utc
  /** The resolved snapshot (for `inheritAllRoles: true` in a body: every role the owner holds now). */
  readonly assumedRoles: ReadonlyArray<RoleId>
  /** Marks a legacy "All roles" key that follows live roles; new keys from the API leave it false. */
  readonly inheritAllRoles?: boolean | undefined
  readonly fullMemberAccess?: boolean | undefined
  readonly name?: string | undefined
  readonly clientId?: string | undefined
  /** The TTL; `DEFAULT_EXPIRY` when omitted. */
  readonly expirySeconds?: number | undefined
  readonly rotatedFrom?: ApiKeyId | undefined
  /** The key that mints this one: its expiry caps this one's. */
  readonly parent?: { readonly id: ApiKeyId; readonly expiresAt: DateTime.Utc } | undefined
}

// The asked-for expiry, never later than the minting key's.
const expiryOf = (input: MintInput): DateTime.Utc => {
  const asked = DateTime.addDuration(
    input.now,
    input.expirySeconds === undefined ? DEFAULT_EXPIRY : Duration.seconds(input.expirySeconds)
  )
  return input.parent === undefined ? asked : DateTime.min(asked, input.parent.expiresAt)
}

/**
 * A new active key record.
 *
 * @since 0.1.0
 * @category utils
 */
export const mint = (input: MintInput): ApiKeyRecord =>
  new ApiKeyRecord({
    id: input.id,
    organization_id: input.organizationId,
    member_id: input.memberId,
    created_by: input.createdBy,
    secret_hash: input.secretHash,
    name: input.name ?? "",
    client_id: input.clientId ?? "",
    assumed_roles: input.assumedRoles,
    inherit_all_roles: input.inheritAllRoles ?? false,
    full_member_access: input.fullMemberAccess ?? false,
    created_at: input.now,
    expires_at: expiryOf(input),
    ...(input.rotatedFrom === undefined ? {} : { rotated_from: input.rotatedFrom }),
    ...(input.parent === undefined ? {} : { parent_key_id: input.parent.id })
  })

/**
 * Revokes a key at `now`. Revoking a revoked key is `invalid_request` (api-surface); an expired key
 * can still be revoked, which hides it from default listings.
 *
 * @since 0.1.0
 * @category utils
 */
export const revoke = (record: ApiKeyRecord, now: DateTime.Utc): Either.Either<ApiKeyRecord, InvalidRequest> =>
  record.revoked_at !== undefined
    ? Either.left(new InvalidRequest({ message: "API key is already revoked" }))
    : Either.right(new ApiKeyRecord({ ...record, revoked_at: now }))

/**
 * What rotating a key needs besides the key itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface RotateInput {
  readonly newId: ApiKeyId
  readonly newSecretHash: SecretHash
  readonly now: DateTime.Utc
  /** The member asking for the rotation (the new key's `created_by`). */
  readonly rotatedBy: MemberId
  /** The new key's TTL; when omitted, the old key's TTL (`expires_at - created_at`) counted from now. */
  readonly expirySeconds?: number | undefined
}

/**
 * The outcome of a rotation: the old key, now revoked, and the key that replaces it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rotation {
  readonly revoked: ApiKeyRecord
  readonly replacement: ApiKeyRecord
}

/**
 * Rotates a key: revokes it and mints a replacement with the same owner, name, role snapshot,
 * "All roles" flag, member access and client metadata. A revoked key cannot be rotated
 * (`invalid_request`, as for revoke); an expired one can, so its owner gets the same scope back.
 *
 * @since 0.1.0
 * @category utils
 */
export const rotate = (record: ApiKeyRecord, input: RotateInput): Either.Either<Rotation, InvalidRequest> =>
  Either.map(
    Either.mapLeft(revoke(record, input.now), () => new InvalidRequest({ message: "cannot rotate a revoked API key" })),
    (revoked): Rotation => ({
      revoked,
      replacement: new ApiKeyRecord({
        ...Struct.omit(record, "revoked_at", "rotated_from"),
        id: input.newId,
        secret_hash: input.newSecretHash,
        created_by: input.rotatedBy,
        created_at: input.now,
        expires_at: input.expirySeconds === undefined
          ? DateTime.addDuration(input.now, Duration.millis(DateTime.distance(record.created_at, record.expires_at)))
          : DateTime.addDuration(input.now, Duration.seconds(input.expirySeconds)),
        rotated_from: record.id
      })
    })
  )

/**
 * The response of `POST /v2/api-keys`: the secret, shown this once, and the record.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateApiKeyResult = Schema.Struct({
  key: Schema.String,
  api_key: ApiKey
}).annotations({ identifier: "CreateApiKeyResult" })
export type CreateApiKeyResult = typeof CreateApiKeyResult.Type

/**
 * The response of `POST /v2/api-keys/{id}/rotate`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RotateApiKeyResult = Schema.Struct({
  key: Schema.String,
  api_key: ApiKey,
  revoked_api_key_id: ApiKeyId
}).annotations({ identifier: "RotateApiKeyResult" })
export type RotateApiKeyResult = typeof RotateApiKeyResult.Type

/**
 * The response of `DELETE /v2/api-keys/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RevokeApiKeyResult = Schema.Struct({
  id: ApiKeyId,
  success: Schema.Boolean
}).annotations({ identifier: "RevokeApiKeyResult" })
export type RevokeApiKeyResult = typeof RevokeApiKeyResult.Type

/**
 * Which keys a listing covers: the caller's own, every key of the organization, or service accounts' keys.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListScope = Schema.Literal("personal", "all", "service_accounts")
export type ListScope = typeof ListScope.Type

/**
 * The page size bounds and default of `GET /v2/api-keys`.
 *
 * @since 0.1.0
 * @category constants
 */
export const PAGE_SIZE = { min: 1, max: 100, default: 50 } as const

/**
 * The query of `GET /v2/api-keys`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListApiKeys = Schema.Struct({
  scope: Schema.optionalWith(ListScope, { default: () => "personal" as const }),
  include_revoked: Schema.optionalWith(Schema.BooleanFromString, { default: () => false }),
  page_size: Pagination.limitParam(PAGE_SIZE.min, PAGE_SIZE.max, PAGE_SIZE.default),
  page_token: Schema.optional(Schema.String)
}).annotations({ identifier: "ListApiKeys" })
export type ListApiKeys = typeof ListApiKeys.Type

/**
 * The response of `GET /v2/api-keys`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListApiKeysResponse = Schema.Struct({
  api_keys: Schema.Array(ApiKey),
  next_page_token: Schema.optional(Schema.String)
}).annotations({ identifier: "ListApiKeysResponse" })
export type ListApiKeysResponse = typeof ListApiKeysResponse.Type

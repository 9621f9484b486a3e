/**
 * The API key repository port.
 *
 * Keys are found two ways: by organization and id (management operations), and by secret hash
 * alone (authentication, which learns the organization from the key it finds).
 *
 * There is deliberately no "last used" write: recording it would turn every authenticated request
 * into a write on a hot row.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as ApiKey from "./ApiKey.js"
import { Conflict, NotFound } from "./Errors.js"
import type { ApiKeyId, MemberId, OrganizationId } from "./Ids.js"
import * as RbacMemory from "./internal/rbacMemory.js"
import type { Member } from "./Member.js"
import * as Pagination from "./Pagination.js"
import type { RoleRecord } from "./Role.js"
import { order as roleOrder } from "./RoleRepo.js"
import type { SecretHash } from "./Secret.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores API keys.
 *
 * @since 0.1.0
 * @category services
 */
export class ApiKeyRepo extends Context.Tag("@sightline/core/ApiKeyRepo")<ApiKeyRepo, ApiKeyRepo.Service>() {}

export declare namespace ApiKeyRepo {
  /** Which keys of an organization a listing returns, and which page of them. */
  export interface ListOptions extends Pagination.PageRequest {
    /**
     * Only keys owned by these members (`personal`: the caller; `service_accounts`: the organization's
     * service accounts, resolved by the caller). Omitted: every key of the organization.
     */
    readonly memberIds?: ReadonlyArray<MemberId> | undefined
    /** Whether revoked keys are listed too. Expired keys are always listed (with status `expired`). */
    readonly includeRevoked: boolean
  }

  /** A key with what authentication needs of its owner, read together. */
  export interface Credential {
    readonly key: ApiKey.ApiKeyRecord
    /** The owning member, soft-deleted or not; none if it is gone. */
    readonly member: Option.Option<Member>
    /** The roles the owner holds now (as `RoleRepo.heldBy` gives them). */
    readonly roles: ReadonlyArray<RoleRecord>
  }

  /** API key storage. Ids and secret hashes are unique across every organization. */
  export interface Service {
    /** Stores a new key; an id or secret hash that already exists is a `Conflict`. */
    readonly create: (record: ApiKey.ApiKeyRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: ApiKeyId) => Effect.Effect<Option.Option<ApiKey.ApiKeyRecord>>
    /** `get` that locks the row until the surrounding transaction ends (revoke, rotate). */
    readonly getForUpdate: (
      organizationId: OrganizationId,
      id: ApiKeyId
    ) => Effect.Effect<Option.Option<ApiKey.ApiKeyRecord>>
    /**
     * The key with this secret hash, in whichever organization it lives, with its owner and the
     * owner's live roles, in one read: what every authenticated request needs, so an adapter answers
     * it with one statement.
     */
    readonly findCredential: (hash: SecretHash) => Effect.Effect<Option.Option<Credential>>
    /** Replaces a stored key (matched by organization and id); `NotFound` when there is none. */
    readonly update: (record: ApiKey.ApiKeyRecord) => Effect.Effect<void, NotFound>
    /**
     * Revokes at `at` every live key minted, directly or down a chain, by the key `parentId`, and
     * answers their ids: a key's children die with it.
     */
    readonly revokeDescendants: (
      organizationId: OrganizationId,
      parentId: ApiKeyId,
      at: DateTime.Utc
    ) => Effect.Effect<ReadonlyArray<ApiKeyId>>
    /** Makes the keys minted by `fromId` children of `toId` (a rotation's replacement). */
    readonly reparent: (organizationId: OrganizationId, fromId: ApiKeyId, toId: ApiKeyId) => Effect.Effect<void>
    /** A page of the organization's keys, newest first (`created_at` desc, then id desc). */
    readonly list: (
      organizationId: OrganizationId,
      options: ListOptions
    ) => Effect.Effect<Pagination.Page<ApiKey.ApiKeyRecord>>
  }
}

/**
 * The position of a key in listings (newest first): its creation time and id.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (record: ApiKey.ApiKeyRecord): Pagination.Keyset => ({
  at: DateTime.formatIso(record.created_at),
  id: record.id
})

/**
 * API keys in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ApiKeyRepo, never, MemoryState> = Layer.effect(
  ApiKeyRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<ApiKeyId, ApiKey.ApiKeyRecord>())
    const rbac = yield* RbacMemory.RbacTables

    const get = (organizationId: OrganizationId, id: ApiKeyId) =>
      state.run(Effect.map(
        Ref.get(table),
        (rows) => HashMap.get(rows, id).pipe(Option.filter((row) => row.organization_id === organizationId))
      ))

    const findBySecretHash = (hash: SecretHash) =>
      Effect.map(Ref.get(table), HashMap.findFirst((row) => row.secret_hash === hash))

    return ApiKeyRepo.of({
      create: (record) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), record.id)) {
            return yield* new Conflict({ message: `an API key with id ${record.id} already exists` })
          }
          if (Option.isSome(yield* findBySecretHash(record.secret_hash))) {
            return yield* new Conflict({ message: "an API key with this secret already exists" })
          }
          yield* Ref.update(table, HashMap.set(record.id, record))
        })),
      get,
      getForUpdate: get,
      findCredential: (hash) =>
        state.run(Effect.gen(function*() {
          const found = yield* findBySecretHash(hash)
          if (Option.isNone(found)) return Option.none()
          const [, key] = found.value
          const member = RbacMemory.findInOrg(yield* Ref.get(rbac.members), key.organization_id, key.member_id)
          const roles = yield* RbacMemory.heldRoles(rbac, key.organization_id, key.member_id, roleOrder)
          return Option.some({ key, member, roles })
        })),
      update: (record) =>
        state.run(Effect.gen(function*() {
          const existing = HashMap.get(yield* Ref.get(table), record.id)
          if (Option.isNone(Option.filter(existing, (row) => row.organization_id === record.organization_id))) {
            return yield* new NotFound()
          }
          yield* Ref.update(table, HashMap.set(record.id, record))
        })),
      revokeDescendants: (organizationId, parentId, at) =>
        state.run(Effect.gen(function*() {
          const rows = Array.from(HashMap.values(yield* Ref.get(table))).filter((row) =>
            row.organization_id === organizationId
          )
          const tree = new Set<ApiKeyId>()
          let frontier: ReadonlyArray<ApiKeyId> = [parentId]
          while (frontier.length > 0) {
            const parents = new Set(frontier)
            frontier = rows.filter((row) =>
              row.parent_key_id !== undefined && parents.has(row.parent_key_id) && !tree.has(row.id)
            ).map((row) => row.id)
            for (const id of frontier) tree.add(id)
          }
          const revoked = rows.filter((row) => tree.has(row.id) && row.revoked_at === undefined)
          yield* Ref.update(
            table,
            (t) =>
              revoked.reduce(
                (acc, row) => HashMap.set(acc, row.id, new ApiKey.ApiKeyRecord({ ...row, revoked_at: at }, true)),
                t
              )
          )
          return revoked.map((row) => row.id)
        })),
      reparent: (organizationId, fromId, toId) =>
        state.run(
          Ref.update(
            table,
            HashMap.map((row) =>
              row.organization_id === organizationId && row.parent_key_id === fromId
                ? new ApiKey.ApiKeyRecord({ ...row, parent_key_id: toId }, true)
                : row
            )
          )
        ),
      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const owners = options.memberIds === undefined ? undefined : new Set<string>(options.memberIds)
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId &&
            (owners === undefined || owners.has(row.member_id)) &&
            (options.includeRevoked || row.revoked_at === undefined)
          )
          return Pagination.pageInMemory(matching, options, keyset)
        }))
    })
  })
).pipe(Layer.provide(RbacMemory.layer))

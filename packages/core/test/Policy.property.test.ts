import { describe, expect, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Decision from "../src/Decision.js"
import { ApiKeyId, MemberId, ModelNumber, OrganizationId, RoleId } from "../src/Ids.js"
import * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"

// --- arbitraries -----------------------------------------------------------------------------------
// One organization with a pool of roles (the two system roles and four custom ones with random
// permissions and model configuration); principals hold random live roles and act through a session
// or a key whose snapshot is a random subset of the pool (so it may name roles the owner has lost).

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`
const org = OrganizationId.make(uuid(1))
const caller = MemberId.make(uuid(10))
const others = [MemberId.make(uuid(11)), MemberId.make(uuid(12)), MemberId.make(uuid(13))]
const keyId = ApiKeyId.make(uuid(20))
const mintedKeyId = ApiKeyId.make(uuid(21))
const now = DateTime.unsafeMake("2025-06-01T12:00:00Z")

const modelNumbers = [1, 2, 3, 4].map((n) => ModelNumber.make(n))
const models: ReadonlyArray<Policy.CatalogueModel> = modelNumbers.map((number) => ({
  number,
  id: `model-${number}`,
  provider: "test"
}))

const modelConfig: FastCheck.Arbitrary<Policy.ModelConfig> = FastCheck.record({
  allowedModelIds: FastCheck.option(FastCheck.subarray(modelNumbers), { nil: undefined }),
  defaultModelId: FastCheck.option(FastCheck.constantFrom(...modelNumbers, ModelNumber.make(9)), { nil: undefined }),
  allowModelChoice: FastCheck.boolean()
})

const pool: FastCheck.Arbitrary<ReadonlyArray<Policy.RoleInfo>> = FastCheck.tuple(
  modelConfig,
  modelConfig,
  FastCheck.array(FastCheck.tuple(FastCheck.subarray([...Permission.all]), modelConfig), { minLength: 4, maxLength: 4 })
).map(([adminModel, memberModel, custom]) => [
  { id: RoleId.make(uuid(100)), name: "admin", permissions: [], isSystem: true, model: adminModel },
  { id: RoleId.make(uuid(101)), name: "member", permissions: [], isSystem: true, model: memberModel },
  ...custom.map(([permissions, model], i) => ({
    id: RoleId.make(uuid(102 + i)),
    name: `custom-${i}`,
    permissions,
    isSystem: false,
    model
  }))
])

const ids = (roles: ReadonlyArray<Policy.RoleInfo>) => roles.map((role) => role.id)

const keyAuth = (roles: ReadonlyArray<Policy.RoleInfo>) =>
  FastCheck.record({
    assumed: FastCheck.subarray([...roles]),
    inheritAllRoles: FastCheck.boolean(),
    fullMemberAccess: FastCheck.boolean()
  }).map(({ assumed, fullMemberAccess, inheritAllRoles }) =>
    Policy.ApiKey({ keyId, assumedRoleIds: ids(assumed), inheritAllRoles, fullMemberAccess })
  )

const auth = (roles: ReadonlyArray<Policy.RoleInfo>) =>
  FastCheck.oneof(FastCheck.constant(Policy.Session()), keyAuth(roles))

const principal = (live: ReadonlyArray<Policy.RoleInfo>, credential: Policy.Auth): Policy.Principal => ({
  organizationId: org,
  memberId: caller,
  isServiceAccount: false,
  roles: live,
  auth: credential
})

/** A pool, and a principal holding some of it through any credential. */
const world = pool.chain((roles) =>
  FastCheck.record({
    roles: FastCheck.constant(roles),
    live: FastCheck.subarray([...roles]),
    auth: auth(roles)
  })
)

/** A pool, and an owner's live roles with one or more of its keys. */
const keysWorld = pool.chain((roles) =>
  FastCheck.record({
    roles: FastCheck.constant(roles),
    live: FastCheck.subarray([...roles], { minLength: 1 }),
    keys: FastCheck.array(keyAuth(roles), { minLength: 1, maxLength: 5 }),
    removed: FastCheck.nat()
  })
)

const grantExpiry = FastCheck.option(
  FastCheck.integer({ min: -3600, max: 3600 }).map((seconds) => DateTime.add(now, { seconds })),
  { nil: undefined }
)
const accessType = FastCheck.constantFrom<Policy.AccessType>("owner", "editor", "viewer")

const grant = (roles: ReadonlyArray<Policy.RoleInfo>, members: ReadonlyArray<MemberId>) =>
  FastCheck.oneof(
    FastCheck.record({ memberId: FastCheck.constantFrom(...members), accessType, expiresAt: grantExpiry }),
    FastCheck.record({ roleId: FastCheck.constantFrom(...ids(roles)), accessType, expiresAt: grantExpiry })
  ) as FastCheck.Arbitrary<Policy.Grant>

const object = (roles: ReadonlyArray<Policy.RoleInfo>): FastCheck.Arbitrary<Policy.ObjectAccess> =>
  FastCheck.record({
    organizationId: FastCheck.constant(org),
    ownerId: FastCheck.option(FastCheck.constantFrom(caller, ...others), { nil: undefined }),
    isPublic: FastCheck.boolean(),
    publicAccessType: FastCheck.option(accessType, { nil: undefined }),
    grants: FastCheck.array(grant(roles, [caller, ...others]), { maxLength: 6 })
  })

const sorted = (roleIds: ReadonlyArray<RoleId>) => Arr.sort(roleIds, Order.string)

const subset = <A>(small: ReadonlyArray<A>, large: ReadonlyArray<A>) => small.every((a) => large.includes(a))

// None is weaker than any access.
const atMost = (a: Option.Option<Policy.AccessType>, b: Option.Option<Policy.AccessType>) =>
  Option.isNone(a) || (Option.isSome(b) && Order.lessThanOrEqualTo(Policy.AccessOrder)(a.value, b.value))

// --- invariants ------------------------------------------------------------------------------------

describe("Policy invariants", () => {
  it.prop(
    "a key's effective permissions are a subset of its owner's live permissions",
    { w: pool.chain((roles) => FastCheck.record({ live: FastCheck.subarray([...roles]), key: keyAuth(roles) })) },
    ({ w }) => {
      const owner = principal(w.live, Policy.Session())
      const key = principal(w.live, w.key)
      expect(subset(Policy.effectiveRoles(key), w.live)).toBe(true)
      expect(subset(Policy.effectivePermissions(key), Policy.effectivePermissions(owner))).toBe(true)
    }
  )

  it.prop(
    "a key never reaches more of an object than its owner's session",
    { w: world.chain((w) => FastCheck.record({ w: FastCheck.constant(w), object: object(w.roles) })) },
    ({ w }) => {
      const viaCredential = Policy.objectAccess(principal(w.w.live, w.w.auth), w.object, now)
      const viaSession = Policy.objectAccess(principal(w.w.live, Policy.Session()), w.object, now)
      expect(atMost(viaCredential, viaSession)).toBe(true)
    }
  )

  // Requests lean towards ones that can pass (roles the creator acts with or the target holds, the
  // consistent `inheritAllRoles`, service-account targets) so that the invariant is checked on many
  // allowed mints, while random ones keep exercising the denials.
  const mintWorld = world.chain((w) => {
    const acting = [...Policy.effectiveRoles(principal(w.live, w.auth))]
    return FastCheck.record({
      hasTarget: FastCheck.boolean(),
      isServiceAccount: FastCheck.oneof(
        { arbitrary: FastCheck.constant(true), weight: 4 },
        { arbitrary: FastCheck.constant(false), weight: 1 }
      ),
      targetLive: FastCheck.subarray([...w.roles])
    }).chain((t) =>
      FastCheck.record({
        w: FastCheck.constant(w),
        target: FastCheck.constant(
          t.hasTarget ? { isServiceAccount: t.isServiceAccount, live: t.targetLive } : undefined
        ),
        assumed: FastCheck.oneof(
          { arbitrary: FastCheck.subarray(acting), weight: 2 },
          { arbitrary: FastCheck.subarray(t.targetLive), weight: 2 },
          { arbitrary: FastCheck.subarray([...w.roles]), weight: 1 }
        ),
        // Undefined: the consistent choice (inherit exactly when no role is named).
        inheritAllRoles: FastCheck.oneof(
          { arbitrary: FastCheck.constant(undefined), weight: 4 },
          { arbitrary: FastCheck.boolean(), weight: 1 }
        ),
        fullMemberAccess: FastCheck.boolean()
      })
    )
  })

  it.prop(
    "minting never widens: the minted key acts with no permission its creator lacks",
    { m: mintWorld },
    ({ m }) => {
      const creator = principal(m.w.live, m.w.auth)
      const target = m.target === undefined ? undefined : {
        id: others[0]!,
        organizationId: org,
        isServiceAccount: m.target.isServiceAccount,
        liveRoleIds: ids(m.target.live)
      }
      const decision = Policy.canMint(creator, {
        assumedRoleIds: ids(m.assumed),
        inheritAllRoles: m.inheritAllRoles ?? m.assumed.length === 0,
        fullMemberAccess: m.fullMemberAccess,
        targetMember: target
      })
      if (decision._tag === "Deny") return
      const ownerRoles = decision.ownerId === caller ? m.w.live : m.target!.live
      const minted: Policy.Principal = {
        organizationId: org,
        memberId: decision.ownerId,
        isServiceAccount: decision.ownerId !== caller,
        roles: ownerRoles,
        auth: Policy.ApiKey({
          keyId: mintedKeyId,
          assumedRoleIds: decision.assumedRoleIds,
          inheritAllRoles: false,
          fullMemberAccess: decision.fullMemberAccess
        })
      }
      // The snapshot is taken from roles the owner holds now, so it is whole on the first request.
      expect(sorted(ids(Policy.effectiveRoles(minted)))).toEqual(sorted(decision.assumedRoleIds))
      expect(subset(Policy.effectivePermissions(minted), Policy.effectivePermissions(creator))).toBe(true)
      if (decision.fullMemberAccess) expect(Policy.keepsMemberGrants(creator)).toBe(true)
    },
    { fastCheck: { numRuns: 500 } }
  )

  it.prop(
    "a personal key over roles the creator acts with is always minted with exactly those roles",
    { m: world.chain((w) => FastCheck.record({ w: FastCheck.constant(w), pick: FastCheck.array(FastCheck.nat()) })) },
    ({ m }) => {
      const creator = principal(m.w.live, m.w.auth)
      const acting = Policy.effectiveRoles(creator)
      const picked = acting.length === 0 ? [] : m.pick.map((n) => acting[n % acting.length]!.id)
      const decision = Policy.canMint(creator, {
        assumedRoleIds: picked,
        inheritAllRoles: picked.length === 0,
        fullMemberAccess: false
      })
      if (acting.length === 0) {
        expect(Decision.isDeny(decision)).toBe(true)
        return
      }
      expect(decision._tag).toBe("Allow")
      if (decision._tag === "Allow") {
        expect(sorted(decision.assumedRoleIds)).toEqual(sorted(Arr.dedupe(picked.length === 0 ? ids(acting) : picked)))
      }
    }
  )

  it.prop(
    "removing a role from an owner removes it from every key at once",
    { k: keysWorld },
    ({ k }) => {
      const removed = k.live[k.removed % k.live.length]!
      const remaining = k.live.filter((role) => role.id !== removed.id)
      const catalogue = { models }
      for (const key of k.keys) {
        const before = principal(k.live, key)
        const after = principal(remaining, key)
        expect(ids(Policy.effectiveRoles(after))).not.toContain(removed.id)
        expect(subset(Policy.effectivePermissions(after), Policy.effectivePermissions(before))).toBe(true)
        expect(subset(Policy.allowedModels(after, catalogue), Policy.allowedModels(before, catalogue))).toBe(true)
      }
    }
  )

  it.prop(
    "an admin key with the wrong owner never reaches an object shared directly with other members",
    {
      w: pool.chain((roles) =>
        FastCheck.record({
          live: FastCheck.subarray([...roles]),
          extra: FastCheck.subarray([...roles]),
          fullMemberAccess: FastCheck.boolean(),
          grants: FastCheck.array(
            FastCheck.record({ memberId: FastCheck.constantFrom(...others), accessType, expiresAt: grantExpiry }),
            { maxLength: 5 }
          ),
          owner: FastCheck.constantFrom(...others),
          resource: FastCheck.constantFrom(...Permission.resources)
        }).map((w) => ({ ...w, admin: roles[0]! }))
      )
    },
    ({ w }) => {
      const live = [w.admin, ...w.live.filter((role) => role.id !== w.admin.id)]
      const key = principal(
        live,
        Policy.ApiKey({
          keyId,
          assumedRoleIds: [w.admin.id, ...ids(w.extra)],
          inheritAllRoles: false,
          fullMemberAccess: w.fullMemberAccess
        })
      )
      expect(Policy.isAdmin(key)).toBe(true)
      const shared: Policy.ObjectAccess = { organizationId: org, ownerId: w.owner, isPublic: false, grants: w.grants }
      expect(Policy.objectAccess(key, shared, now)).toEqual(Option.none())
      for (const check of [Policy.canRead, Policy.canWrite, Policy.canOwn]) {
        const decision = check(key, w.resource, shared, now)
        expect(decision._tag === "Deny" && decision.code).toBe("not_found")
      }
    }
  )

  it.prop(
    "the models a caller may use are catalogue models, and a resolved chat model is one of them",
    {
      w: world.chain((w) =>
        FastCheck.record({
          w: FastCheck.constant(w),
          catalogue: FastCheck.record({
            models: FastCheck.subarray([...models]),
            defaultModel: FastCheck.option(FastCheck.constantFrom(...modelNumbers), { nil: undefined })
          }),
          requested: FastCheck.option(FastCheck.constantFrom(...models.map((m) => m.id), "unknown"), {
            nil: undefined
          })
        })
      )
    },
    ({ w }) => {
      const p = principal(w.w.live, w.w.auth)
      const allowed = Policy.allowedModels(p, w.catalogue)
      expect(subset(allowed, w.catalogue.models)).toBe(true)
      const fallback = Policy.defaultModel(p, w.catalogue)
      if (Option.isSome(fallback)) expect(allowed).toContain(fallback.value)
      const decision = Policy.resolveChatModel(p, { requested: w.requested }, w.catalogue)
      if (decision._tag === "Allow") {
        expect(Option.isSome(decision.model)).toBe(true)
        expect(allowed).toContain(Option.getOrThrow(decision.model))
      } else {
        expect(decision.code).toBe("permission_denied")
      }
    }
  )
})

/**
 * The service accounts use cases (`/v2/service-accounts`): non-human members that keys are minted
 * for. Managing them is organization administration (`organization:write`); giving one roles is
 * also role administration, so every role must pass `Policy.canAssignRole`.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auditor } from "./Auditor.js"
import { liveRoles } from "./Auth.js"
import { enforce } from "./Decision.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { GroupRepo } from "./GroupRepo.js"
import { IdGenerator } from "./IdGenerator.js"
import { MemberId } from "./Ids.js"
import { MemberRepo } from "./MemberRepo.js"
import { ensureAdminRemains } from "./Members.js"
import * as Policy from "./Policy.js"
import * as Role from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import * as ServiceAccount from "./ServiceAccount.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The service accounts use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class ServiceAccounts extends Context.Tag("@sightline/core/ServiceAccounts")<
  ServiceAccounts,
  ServiceAccounts.Service
>() {}

export declare namespace ServiceAccounts {
  /** The operations of `/v2/service-accounts`. The caller comes first; lookups are scoped to its organization. */
  export interface Service {
    /**
     * `POST /v2/service-accounts` (`organization:write`; each role also `Policy.canAssignRole`). A
     * role id that is not the organization's is `NotFound`.
     */
    readonly create: (
      principal: Policy.Principal,
      request: ServiceAccount.CreateServiceAccount
    ) => Effect.Effect<ServiceAccount.CreateServiceAccountResult, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/service-accounts` (`organization:read`): the live service accounts, oldest first. */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<ServiceAccount.ServiceAccountList, Unauthenticated | PermissionDenied>
    /**
     * `DELETE /v2/service-accounts/{id}` (`organization:write`): a soft delete, so the account's keys
     * stop at once. A human, a deleted account or another organization's is `NotFound`.
     */
    readonly delete: (
      principal: Policy.Principal,
      id: MemberId
    ) => Effect.Effect<
      ServiceAccount.DeleteServiceAccountResult,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
  }
}

/**
 * Builds the service accounts use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const members = yield* MemberRepo
  const roles = yield* RoleRepo
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  // Only what it names: the context is merged into the caller's on every call.
  const context = Context.pick(MemberRepo, RoleRepo, GroupRepo)(
    yield* Effect.context<MemberRepo | RoleRepo | GroupRepo>()
  )
  const provided = <A, E>(
    effect: Effect.Effect<A, E, MemberRepo | RoleRepo | GroupRepo>
  ) => Effect.provide(effect, context)
  const auditor = yield* Auditor

  const create = Traced.fn("ServiceAccounts.create")(
    function*(principal: Policy.Principal, request: ServiceAccount.CreateServiceAccount) {
      yield* enforce(
        Policy.requirePermission(principal, "organization:write")
      )
      const organizationId = principal.organizationId
      return yield* tx.withTransaction(Effect.gen(function*() {
        const granted = yield* Effect.forEach(
          Arr.dedupe(request.role_ids),
          // Locked: a concurrent edit that widens the role cannot slip between the check and the assignment.
          (roleId) =>
            Effect.flatMap(roles.getForUpdate(organizationId, roleId), Effect.mapError(() => new Errors.NotFound()))
        )
        for (const role of granted) {
          yield* enforce(Policy.canAssignRole(principal, Role.toRoleInfo(role)))
        }
        const account = ServiceAccount.make({
          id: MemberId.make(yield* ids.uuid),
          organizationId,
          request,
          now: yield* DateTime.now
        })
        // The address embeds a fresh id, so it cannot clash with another member's.
        yield* Effect.orDie(members.create(account))
        for (const role of granted) yield* Effect.orDie(members.assignRole(organizationId, account.id, role.id))
        yield* auditor.recordBy(principal, {
          action: "service_account.create",
          resourceType: "service_account",
          resourceId: account.id,
          details: { name: account.name, role_ids: granted.map((role) => role.id) }
        })
        return { member_id: account.id, email: account.email }
      }))
    }
  )

  const list = Traced.fn("ServiceAccounts.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const organizationId = principal.organizationId
    const accounts = yield* members.list(organizationId, { isServiceAccount: true })
    const items = yield* Effect.forEach(
      accounts,
      (account) =>
        Effect.map(provided(liveRoles(organizationId, account.id)), (held) => ServiceAccount.toListItem(account, held))
    )
    return { service_accounts: items }
  })

  const remove = Traced.fn("ServiceAccounts.delete")(function*(principal: Policy.Principal, id: MemberId) {
    yield* enforce(Policy.requirePermission(principal, "organization:write"))
    const organizationId = principal.organizationId
    return yield* tx.withTransaction(Effect.gen(function*() {
      const account = yield* members.get(organizationId, id)
      // Humans are managed through `/v2/members`: here they do not exist, like deleted accounts.
      if (Option.isNone(account) || !account.value.is_service_account || account.value.deleted_at !== undefined) {
        return yield* new Errors.NotFound()
      }
      if (id === principal.memberId) {
        return yield* new Errors.InvalidRequest({ message: "a service account cannot delete itself" })
      }
      const held = yield* provided(liveRoles(organizationId, id))
      yield* enforce(Policy.canActOnMember(principal, held.map(Role.toRoleInfo)))
      yield* provided(ensureAdminRemains(organizationId, { _tag: "RemoveMember", memberId: id }))
      yield* Effect.orDie(members.softDelete(organizationId, id, yield* DateTime.now))
      yield* auditor.recordBy(principal, {
        action: "service_account.delete",
        resourceType: "service_account",
        resourceId: id,
        details: { name: account.value.name }
      })
      return { success: true }
    }))
  })

  return ServiceAccounts.of({ create, list, delete: remove })
})

/**
 * The service accounts use cases over the repositories, `Transaction`, `Auditor` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(ServiceAccounts, make)

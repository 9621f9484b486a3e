/**
 * The members use cases: listing and inviting members, deleting them, and assigning roles
 * (`/v2/members`).
 *
 * Rules beyond the policy engine's, decided here because no other module owns them:
 * - nobody deletes themselves (a key could otherwise lock its own organization out by accident);
 * - the organization always keeps at least one live admin (`conflict` otherwise), so someone can
 *   still administer it;
 * - removing a member who holds permissions the caller lacks needs the `admin` role, for the same
 *   reason `Policy.canAssignRole` guards removing a role: an administrator never takes away more
 *   than it holds.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auditor } from "./Auditor.js"
import { liveRoles } from "./Auth.js"
import * as Decision from "./Decision.js"
import { Delivery } from "./Delivery.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { Group } from "./Group.js"
import { GroupRepo } from "./GroupRepo.js"
import { IdGenerator } from "./IdGenerator.js"
import { MemberId, type OrganizationId, type RoleId } from "./Ids.js"
import * as SignInLinks from "./internal/signInLinks.js"
import * as Member from "./Member.js"
import { MemberRepo } from "./MemberRepo.js"
import type * as Permission from "./Permission.js"
import * as Policy from "./Policy.js"
import * as Role from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import { SecretHasher } from "./Secret.js"
import type * as Session from "./Session.js"
import { SessionRepo } from "./SessionRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The members use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Members extends Context.Tag("@sightline/core/Members")<Members, Members.Service>() {}

export declare namespace Members {
  /** The operations of `/v2/members`. The caller comes first; every lookup is scoped to its organization. */
  export interface Service {
    /** `GET /v2/members/me` (any caller): the caller's member, roles and permissions on this credential. */
    readonly me: (principal: Policy.Principal) => Effect.Effect<Member.Me, Unauthenticated>
    /** `GET /v2/members` (`member:read`): the live members, service accounts included, oldest first. */
    readonly list: (principal: Policy.Principal) => Effect.Effect<Member.MemberList, Unauthenticated | PermissionDenied>
    /**
     * `POST /v2/members/invite` (`member:write`; inviting as `admin` also needs `Policy.canAssignRole`).
     * An e-mail address the organization already has, deleted members included, is a `Conflict`.
     */
    readonly invite: (
      principal: Policy.Principal,
      request: Member.InviteMember,
      linkUrl?: Session.LinkUrl
    ) => Effect.Effect<Member.InviteMemberResult, Unauthenticated | PermissionDenied | Conflict>
    /**
     * `DELETE /v2/members/{id}` (`member:write`): soft by default, erasing with `hard_delete`. A
     * soft-deleted member is `NotFound` except to a hard delete; deleting yourself is
     * `InvalidRequest`; deleting the last admin is a `Conflict`.
     */
    readonly delete: (
      principal: Policy.Principal,
      id: MemberId,
      params: Member.DeleteMemberParams
    ) => Effect.Effect<
      Member.DeleteMemberResult,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
    /** `GET /v2/members/{id}/roles` (`role:read`): every role the member holds, directly or through groups. */
    readonly listRoles: (
      principal: Policy.Principal,
      id: MemberId
    ) => Effect.Effect<Role.MemberRoles, Unauthenticated | PermissionDenied | NotFound>
    /** `POST /v2/members/{id}/roles` (`role:write` and `Policy.canAssignRole`); a held role is a no-op. */
    readonly assignRole: (
      principal: Policy.Principal,
      id: MemberId,
      request: Role.AssignRole
    ) => Effect.Effect<Role.RoleAssignmentResult, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `DELETE /v2/members/{id}/roles/{roleId}` (`role:write` and `Policy.canAssignRole`); a role not
     * held is a no-op. Taking `admin` from the last admin is a `Conflict`.
     */
    readonly unassignRole: (
      principal: Policy.Principal,
      id: MemberId,
      roleId: RoleId
    ) => Effect.Effect<Role.RoleAssignmentResult, Unauthenticated | PermissionDenied | NotFound | Conflict>
  }
}

// -----------------------------------------------------------------------------------------------
// Shared rules (also used by `ServiceAccounts`)
// -----------------------------------------------------------------------------------------------

/** The roles of `roles` whose ids are held directly or through the groups, in the order of `roles`. */
const heldRoles = <R extends Role.Role>(
  roles: ReadonlyArray<R>,
  direct: ReadonlyArray<RoleId>,
  memberId: MemberId,
  groups: ReadonlyArray<Group>
): ReadonlyArray<R> => {
  const viaGroups = groups.filter((group) => group.member_ids.includes(memberId)).flatMap((group) => group.role_ids)
  return roles.filter((role) => direct.includes(role.id) || viaGroups.includes(role.id))
}

/**
 * The organization's `admin` or `member` system role; every organization is created with both.
 *
 * @since 0.1.0
 * @category utils
 */
export const systemRole = (
  organizationId: OrganizationId,
  name: Permission.SystemRoleName
): Effect.Effect<Role.RoleRecord, never, RoleRepo> =>
  Effect.flatMap(RoleRepo, (repo) => repo.findByName(organizationId, name)).pipe(
    Effect.flatMap(Option.match({
      // Role names are unique ignoring case, so a match that is not the system role cannot exist
      // unless the organization was never bootstrapped: a broken store, hence a defect.
      onNone: () => Effect.dieMessage(`organization ${organizationId} has no ${name} system role`),
      onSome: (role) =>
        role.is_system
          ? Effect.succeed(role)
          : Effect.dieMessage(`role ${name} of ${organizationId} is not a system role`)
    }))
  )

/**
 * What a change would do to the organization's admins.
 *
 * @since 0.1.0
 * @category models
 */
export type AdminChange =
  | { readonly _tag: "RemoveMember"; readonly memberId: MemberId }
  | { readonly _tag: "UnassignAdmin"; readonly memberId: MemberId }

/**
 * Fails with `Conflict` when the change would leave an organization that has a live admin without
 * one. Admins are the live members holding the `admin` system role directly or through a group.
 *
 * @since 0.1.0
 * @category utils
 */
export const ensureAdminRemains = (
  organizationId: OrganizationId,
  change: AdminChange
): Effect.Effect<void, Conflict, MemberRepo | RoleRepo | GroupRepo> =>
  Effect.gen(function*() {
    const members = yield* MemberRepo
    const admin = yield* systemRole(organizationId, "admin")
    // Every change that can remove an admin takes the admin role's row lock first, so two of them
    // (two admins deleting each other, say) queue up and the second sees the first's outcome.
    yield* Effect.flatMap(RoleRepo, (repo) => repo.getForUpdate(organizationId, admin.id))
    const live = (yield* members.list(organizationId)).map((member) => member.id)
    const direct = yield* members.membersWithRole(organizationId, admin.id)
    const viaGroups = (yield* Effect.flatMap(GroupRepo, (repo) => repo.list(organizationId)))
      .filter((group) => group.role_ids.includes(admin.id))
      .flatMap((group) => group.member_ids)
    const before = live.filter((id) => direct.includes(id) || viaGroups.includes(id))
    const after = live.filter((id) =>
      change._tag === "RemoveMember"
        ? id !== change.memberId && (direct.includes(id) || viaGroups.includes(id))
        : (direct.includes(id) && id !== change.memberId) || viaGroups.includes(id)
    )
    if (before.length > 0 && after.length === 0) {
      return yield* new Errors.Conflict({ message: "the organization must keep at least one admin" })
    }
  })

/**
 * The part of an e-mail address before the `@`: the display name of a member invited without one.
 *
 * @since 0.1.0
 * @category utils
 */
export const nameFromEmail = (email: string): string => email.slice(0, email.lastIndexOf("@"))

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/**
 * Builds the members use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const members = yield* MemberRepo
  const roles = yield* RoleRepo
  const groups = yield* GroupRepo
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  // Only what it names: the context is merged into the caller's on every call.
  const context = Context.pick(MemberRepo, RoleRepo, GroupRepo, SessionRepo, SecretHasher)(
    yield* Effect.context<MemberRepo | RoleRepo | GroupRepo | SessionRepo | SecretHasher>()
  )
  const provided = <A, E>(
    effect: Effect.Effect<A, E, MemberRepo | RoleRepo | GroupRepo | SessionRepo | SecretHasher>
  ) => Effect.provide(effect, context)
  const auditor = yield* Auditor
  const delivery = Context.make(Delivery, yield* Delivery)

  // A member the API can still address: deleted members are gone from its point of view.
  const liveMember = (organizationId: OrganizationId, id: MemberId) =>
    Effect.flatMap(
      members.get(organizationId, id),
      Option.match({
        onNone: () => Effect.fail(new Errors.NotFound()),
        onSome: (member) =>
          member.deleted_at === undefined ? Effect.succeed(member) : Effect.fail(new Errors.NotFound())
      })
    )

  const existingRole = (organizationId: OrganizationId, id: RoleId) =>
    Effect.flatMap(roles.getForUpdate(organizationId, id), Effect.mapError(() => new Errors.NotFound()))

  const list = Traced.fn("Members.list")(function*(principal: Policy.Principal) {
    yield* Decision.enforce(Policy.requirePermission(principal, "member:read"))
    const organizationId = principal.organizationId
    const [allRoles, allGroups, live] = yield* Effect.all([
      roles.list(organizationId),
      groups.list(organizationId),
      members.list(organizationId)
    ])
    const summaries = yield* Effect.forEach(live, (member) =>
      Effect.map(
        members.roleIds(organizationId, member.id),
        (direct) => Member.toSummary(member, heldRoles(allRoles, direct, member.id, allGroups))
      ))
    return { members: summaries }
  })

  const me = Traced.fn("Members.me")(function*(principal: Policy.Principal) {
    yield* Decision.enforce(Policy.authenticated(principal))
    const member = yield* liveMember(principal.organizationId, principal.memberId).pipe(
      Effect.mapError(() => new Errors.Unauthenticated())
    )
    return {
      member_id: member.id,
      organization_id: member.organization_id,
      email: member.email,
      name: member.name,
      roles: Policy.effectiveRoles(principal).map((role) => role.name),
      permissions: [...Policy.effectivePermissions(principal)].sort(),
      is_admin: Policy.isAdmin(principal)
    }
  })

  const invite = Traced.fn("Members.invite")(function*(
    principal: Policy.Principal,
    request: Member.InviteMember,
    linkUrl?: Session.LinkUrl
  ) {
    yield* Decision.enforce(Policy.requirePermission(principal, "member:write"))
    const organizationId = principal.organizationId
    const invited = yield* tx.withTransaction(Effect.gen(function*() {
      const role = yield* provided(systemRole(organizationId, request.role))
      // `member` is the default every member gets, which is what `member:write` is for; `admin` hands
      // out every permission, so only someone who may assign it (an admin) invites one.
      if (request.role === "admin") {
        yield* Decision.enforce(Policy.canAssignRole(principal, Role.toRoleInfo(role)))
      }
      const id = MemberId.make(yield* ids.uuid)
      yield* members.create(
        new Member.Member({
          id,
          organization_id: organizationId,
          email: request.email,
          name: nameFromEmail(request.email),
          is_service_account: false,
          is_scim_managed: false,
          created_at: yield* DateTime.now
        })
      )
      yield* Effect.orDie(members.assignRole(organizationId, id, role.id))
      yield* auditor.recordBy(principal, {
        action: "member.invite",
        resourceType: "member",
        resourceId: id,
        // No e-mail address: an erased member must not stay identifiable through the log.
        details: { role: request.role }
      })
      const link = yield* provided(SignInLinks.issue(organizationId, id, "invite"))
      return { id, link }
    }))
    // After the commit: the member exists whether or not the mail server takes the message.
    const handed = yield* Effect.provide(
      SignInLinks.handOver(organizationId, request.email, invited.link, linkUrl),
      delivery
    )
    return {
      success: true,
      member_id: invited.id,
      ...(handed.token === undefined ? {} : { sign_in_token: handed.token }),
      sign_in_expires_at: DateTime.unsafeFromDate(invited.link.expires_at),
      sign_in_emailed: handed.emailed
    }
  })

  const remove = Traced.fn("Members.delete")(
    function*(principal: Policy.Principal, id: MemberId, params: Member.DeleteMemberParams) {
      yield* Decision.enforce(Policy.requirePermission(principal, "member:write"))
      const organizationId = principal.organizationId
      return yield* tx.withTransaction(Effect.gen(function*() {
        const member = yield* Effect.flatMap(
          members.get(organizationId, id),
          Effect.mapError(() => new Errors.NotFound())
        )
        // A soft-deleted member is gone, except to the hard delete that erases it for good.
        if (member.deleted_at !== undefined && !params.hard_delete) return yield* new Errors.NotFound()
        if (id === principal.memberId) {
          return yield* new Errors.InvalidRequest({ message: "you cannot delete yourself" })
        }
        const held = yield* provided(liveRoles(organizationId, id))
        yield* Decision.enforce(Policy.canActOnMember(principal, held.map(Role.toRoleInfo)))
        yield* provided(ensureAdminRemains(organizationId, { _tag: "RemoveMember", memberId: id }))
        if (params.hard_delete) {
          yield* Effect.orDie(members.hardDelete(organizationId, id))
        } else {
          yield* Effect.orDie(members.softDelete(organizationId, id, yield* DateTime.now))
        }
        // No e-mail in the details: a hard delete erases the person, the log must not keep them.
        yield* auditor.recordBy(principal, {
          action: "member.delete",
          resourceType: "member",
          resourceId: id,
          details: { hard_delete: params.hard_delete, is_service_account: member.is_service_account }
        })
        return { id, success: true }
      }))
    }
  )

  const listRoles = Traced.fn("Members.listRoles")(function*(principal: Policy.Principal, id: MemberId) {
    yield* Decision.enforce(Policy.requirePermission(principal, "role:read"))
    yield* liveMember(principal.organizationId, id)
    return { member_id: id, roles: yield* provided(liveRoles(principal.organizationId, id)) }
  })

  const assignRole = Traced.fn("Members.assignRole")(
    function*(principal: Policy.Principal, id: MemberId, request: Role.AssignRole) {
      yield* Decision.enforce(Policy.requirePermission(principal, "role:write"))
      const organizationId = principal.organizationId
      return yield* tx.withTransaction(Effect.gen(function*() {
        yield* liveMember(organizationId, id)
        const role = yield* existingRole(organizationId, request.roleId)
        yield* Decision.enforce(Policy.canAssignRole(principal, Role.toRoleInfo(role)))
        // Assigning a held role changes nothing, so it leaves no audit entry either.
        if (!(yield* members.roleIds(organizationId, id)).includes(role.id)) {
          yield* members.assignRole(organizationId, id, role.id)
          yield* auditor.recordBy(principal, {
            action: "member.role_assign",
            resourceType: "member",
            resourceId: id,
            details: { role_id: role.id, role_name: role.name }
          })
        }
        return { member_id: id, role_id: role.id, success: true }
      }))
    }
  )

  const unassignRole = Traced.fn("Members.unassignRole")(
    function*(principal: Policy.Principal, id: MemberId, roleId: RoleId) {
      yield* Decision.enforce(Policy.requirePermission(principal, "role:write"))
      const organizationId = principal.organizationId
      return yield* tx.withTransaction(Effect.gen(function*() {
        yield* liveMember(organizationId, id)
        const role = yield* existingRole(organizationId, roleId)
        yield* Decision.enforce(Policy.canAssignRole(principal, Role.toRoleInfo(role)))
        if ((yield* members.roleIds(organizationId, id)).includes(role.id)) {
          if (Role.isSystemAdmin(role)) {
            yield* provided(ensureAdminRemains(organizationId, { _tag: "UnassignAdmin", memberId: id }))
          }
          yield* members.unassignRole(organizationId, id, role.id)
          yield* auditor.recordBy(principal, {
            action: "member.role_unassign",
            resourceType: "member",
            resourceId: id,
            details: { role_id: role.id, role_name: role.name }
          })
        }
        return { member_id: id, role_id: role.id, success: true }
      }))
    }
  )

  return Members.of({ me, list, invite, delete: remove, listRoles, assignRole, unassignRole })
})

/**
 * The members use cases over the repositories, `Transaction`, `Auditor` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Members, make)

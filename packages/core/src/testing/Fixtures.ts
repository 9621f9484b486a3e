/**
 * Fixtures shared by the contract suites and the use-case tests: fresh organizations, members and
 * roles with random ids, so that suites can run on a shared, non-empty database; the principal a
 * member acts as; helpers for keyset listings and for seeding a library.
 *
 * @since 0.1.0
 */
import { expect } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as ApiKeys from "../ApiKeys.js"
import { Auth, liveRoles, principalOf } from "../Auth.js"
import { ChatChannelRecord } from "../ChatChannel.js"
import { ChatChannelRepo } from "../ChatChannelRepo.js"
import type { InvalidRequest } from "../Errors.js"
import type { GroupRepo } from "../GroupRepo.js"
import { ChatChannelId, MemberId, OrganizationId, RoleId } from "../Ids.js"
import type * as Library from "../Library.js"
import { encodeText } from "../LibraryDiff.js"
import { LibraryStore } from "../LibraryStore.js"
import { Member } from "../Member.js"
import { MemberRepo } from "../MemberRepo.js"
import * as Members from "../Members.js"
import { Organization } from "../Organization.js"
import { OrganizationRepo } from "../OrganizationRepo.js"
import * as Organizations from "../Organizations.js"
import * as Pagination from "../Pagination.js"
import type * as Permission from "../Permission.js"
import * as Policy from "../Policy.js"
import * as Role from "../Role.js"
import { RoleRepo } from "../RoleRepo.js"

const randomUuid = () => (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID()

/**
 * A fresh random UUID (fixtures must not collide across runs on a shared database).
 *
 * @since 0.1.0
 * @category utils
 */
export const uuid = (): string => randomUuid()

/**
 * Creates and returns a new organization.
 *
 * @since 0.1.0
 * @category utils
 */
export const organization = (name = "Fixture Org"): Effect.Effect<Organization, never, OrganizationRepo> =>
  Effect.gen(function*() {
    const repo = yield* OrganizationRepo
    const org = new Organization({
      id: OrganizationId.make(uuid()),
      name,
      created_at: yield* DateTime.now
    })
    yield* repo.create(org)
    return org
  })

/**
 * Creates and returns a new member of an organization, holding `roleIds` (assigned in that order).
 *
 * @since 0.1.0
 * @category utils
 */
export const member = (
  organizationId: OrganizationId,
  options: {
    readonly email?: string
    readonly name?: string
    readonly isServiceAccount?: boolean
    readonly roleIds?: ReadonlyArray<RoleId>
  } = {}
): Effect.Effect<Member, never, MemberRepo> =>
  Effect.gen(function*() {
    const repo = yield* MemberRepo
    const id = MemberId.make(uuid())
    const m = new Member({
      id,
      organization_id: organizationId,
      email: options.email ?? `${id}@example.com`,
      name: options.name ?? "Fixture Member",
      is_service_account: options.isServiceAccount ?? false,
      is_scim_managed: false,
      created_at: yield* DateTime.now
    })
    yield* Effect.orDie(repo.create(m))
    for (const roleId of options.roleIds ?? []) yield* Effect.orDie(repo.assignRole(organizationId, id, roleId))
    return m
  })

/**
 * Creates a new organization with one member.
 *
 * @since 0.1.0
 * @category constants
 */
export const organizationWithMember: Effect.Effect<
  { readonly org: Organization; readonly member: Member },
  never,
  OrganizationRepo | MemberRepo
> = Effect.gen(function*() {
  const org = yield* organization()
  return { org, member: yield* member(org.id) }
})

/**
 * Stores a chat channel of an organization (a Slack-style webhook URL) and answers its id.
 *
 * @since 0.1.0
 * @category utils
 */
export const chatChannel = (
  organizationId: OrganizationId,
  createdBy: MemberId
): Effect.Effect<ChatChannelId, never, ChatChannelRepo> =>
  Effect.gen(function*() {
    const id = ChatChannelId.make(uuid())
    yield* Effect.orDie((yield* ChatChannelRepo).create(
      new ChatChannelRecord({
        id,
        organization_id: organizationId,
        name: "alerts",
        webhook_url: "https://hooks.example.com/services/T0/B0/x",
        created_by: createdBy,
        created_at: yield* DateTime.now
      })
    ))
    return id
  })

/**
 * Creates and returns a new custom role of an organization, created at `now` (the current time by default).
 *
 * @since 0.1.0
 * @category utils
 */
export const role = (
  organizationId: OrganizationId,
  name: string,
  options: { readonly permissions?: ReadonlyArray<Permission.Permission>; readonly now?: DateTime.Utc } = {}
): Effect.Effect<Role.RoleRecord, never, RoleRepo> =>
  Effect.gen(function*() {
    const record = Role.make({
      id: RoleId.make(uuid()),
      organizationId,
      request: { name, permissions: options.permissions ?? [] },
      now: options.now ?? (yield* DateTime.now)
    })
    yield* Effect.orDie((yield* RoleRepo).create(record))
    return record
  })

/**
 * Creates the `admin` and `member` system roles of an organization (as its bootstrap does), `admin` first.
 *
 * @since 0.1.0
 * @category utils
 */
export const systemRoles = (
  organizationId: OrganizationId,
  now?: DateTime.Utc
): Effect.Effect<{ readonly admin: Role.RoleRecord; readonly member: Role.RoleRecord }, never, RoleRepo> =>
  Effect.gen(function*() {
    const roles = yield* RoleRepo
    const system = Role.systemRoles({
      organizationId,
      adminId: RoleId.make(uuid()),
      memberId: RoleId.make(uuid()),
      now: now ?? (yield* DateTime.now)
    })
    yield* Effect.orDie(roles.create(system.admin))
    yield* Effect.orDie(roles.create(system.member))
    return system
  })

/**
 * The principal of a stored member acting with `auth` (a session by default), with its live roles:
 * what `Auth` builds, without checking that the member may still act (a deleted member's principal
 * is marked deleted rather than refused).
 *
 * @since 0.1.0
 * @category utils
 */
export const principal = (
  organizationId: OrganizationId,
  memberId: MemberId,
  auth: Policy.Auth = Policy.Session()
): Effect.Effect<Policy.Principal, never, MemberRepo | RoleRepo | GroupRepo> =>
  Effect.gen(function*() {
    const stored = yield* Effect.flatMap(MemberRepo, (repo) => repo.get(organizationId, memberId))
    if (Option.isNone(stored)) return yield* Effect.dieMessage(`no member ${memberId} in ${organizationId}`)
    return principalOf(stored.value, yield* liveRoles(organizationId, memberId), auth)
  })

/**
 * Creates an organization through the `Organizations` use case (its system roles, its first admin
 * and the audit entry of the bootstrap) and returns what it made with the admin's principal. The
 * organization's ids come from the `IdGenerator`: for use-case tests over the memory layer.
 *
 * @since 0.1.0
 * @category utils
 */
export const organizationWithAdmin = (
  name = "Acme",
  adminEmail = "ada@acme.example"
): Effect.Effect<
  { readonly created: Organizations.Created; readonly org: OrganizationId; readonly admin: Policy.Principal },
  InvalidRequest,
  Organizations.Organizations | MemberRepo | RoleRepo | GroupRepo
> =>
  Effect.gen(function*() {
    const created = yield* (yield* Organizations.Organizations).create({ name, adminEmail })
    const org = created.organization.id
    return { created, org, admin: yield* principal(org, created.admin.id) }
  })

/**
 * The keyset a page's cursor names; a defect when the page is the last one.
 *
 * @since 0.1.0
 * @category utils
 */
export const nextKeyset = (page: Pagination.Page<unknown>): Effect.Effect<Pagination.Keyset> =>
  page.nextCursor === undefined
    ? Effect.dieMessage("expected another page")
    : Effect.orDie(Pagination.decodeCursor(page.nextCursor))

/**
 * Every id a keyset listing returns from `after` on, following cursors, checking that no page holds
 * more than `limit` rows. `list` reads the page after a position (the first page for `undefined`).
 *
 * @since 0.1.0
 * @category utils
 */
export const allIds = <A extends { readonly id: string }, E, R>(
  limit: number,
  list: (after: Pagination.Keyset | undefined) => Effect.Effect<Pagination.Page<A>, E, R>,
  after?: Pagination.Keyset
): Effect.Effect<Array<A["id"]>, E | InvalidRequest, R> =>
  Effect.gen(function*() {
    const ids: Array<A["id"]> = []
    let cursor = after
    for (;;) {
      const page: Pagination.Page<A> = yield* list(cursor)
      expect(page.items.length).toBeLessThanOrEqual(limit)
      ids.push(...page.items.map((row) => row.id))
      if (page.nextCursor === undefined) return ids
      cursor = yield* Pagination.decodeCursor(page.nextCursor)
    }
  })

/**
 * The ids of records in keyset listing order: newest `created_at` first, ties by id descending.
 *
 * @since 0.1.0
 * @category utils
 */
export const newestFirst = <A extends { readonly id: string; readonly created_at: DateTime.Utc }>(
  records: ReadonlyArray<A>
): Array<A["id"]> =>
  [...records].sort((a, b) =>
    Pagination.compareDesc(
      { at: DateTime.formatIso(a.created_at), id: a.id },
      { at: DateTime.formatIso(b.created_at), id: b.id }
    )
  ).map((row) => row.id)

/**
 * Staged library edits: a path to its new text, `null` deleting it.
 *
 * @since 0.1.0
 * @category utils
 */
export const edits = (changes: Record<string, string | null>): Library.Edits =>
  HashMap.fromIterable(
    Object.entries(changes).map(([path, text]) =>
      [path, text === null ? Option.none() : Option.some(encodeText(text))] as const
    )
  )

/**
 * Moves an organization's library main to a commit holding exactly these files (as an import or a merge would).
 *
 * @since 0.1.0
 * @category utils
 */
export const seedMain = (
  organizationId: OrganizationId,
  author: MemberId,
  files: Record<string, string>
): Effect.Effect<string, never, LibraryStore> =>
  Effect.gen(function*() {
    const store = yield* LibraryStore
    const head = yield* store.head(organizationId)
    const ref = yield* Effect.orDie(store.commit(organizationId, {
      ...(Option.isSome(head) ? { parent: head.value } : {}),
      message: "seed",
      author,
      files: HashMap.fromIterable(Object.entries(files).map(([p, t]) => [p, encodeText(t)] as const))
    }))
    yield* Effect.orDie(store.setHead(organizationId, head, ref))
    return ref
  })

/**
 * A new member (system role `member`) invited by the admin whose API key is `adminKey`, with a
 * personal key holding all its roles: a second person for tests over the use cases.
 *
 * @since 0.1.0
 * @category utils
 */
export const memberWithKey = (
  adminKey: string
): Effect.Effect<
  { readonly memberId: MemberId; readonly key: string },
  unknown,
  Auth | Members.Members | ApiKeys.ApiKeys
> =>
  Effect.gen(function*() {
    const admin = yield* (yield* Auth).authenticateApiKey(adminKey)
    const email = `m-${randomUuid().slice(0, 8)}@example.test`
    const { member_id } = yield* (yield* Members.Members).invite(admin, { email, role: "member" })
    const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(admin.organizationId, member_id, "member key")
    return { memberId: member_id, key }
  })

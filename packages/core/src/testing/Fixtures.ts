/**
 * Fixtures shared by the contract suites: fresh organizations and members with random ids, so that
 * suites can run on a shared, non-empty database.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { MemberId, OrganizationId } from "../Ids.js"
import { Member } from "../Member.js"
import { MemberRepo } from "../MemberRepo.js"
import { Organization } from "../Organization.js"
import { OrganizationRepo } from "../OrganizationRepo.js"

const randomUuid = () => (globalThis as unknown as { crypto: { randomUUID(): string } }).crypto.randomUUID()

/** A fresh random UUID (fixtures must not collide across runs on a shared database). */
export const uuid = (): string => randomUuid()

/** Creates and returns a new organization. */
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

/** Creates and returns a new member of an organization. */
export const member = (
  organizationId: OrganizationId,
  options: { readonly email?: string; readonly name?: string; readonly isServiceAccount?: boolean } = {}
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
    return m
  })

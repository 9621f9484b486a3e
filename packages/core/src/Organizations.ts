/**
 * The organizations use cases: creating a tenant with its system roles and first admin, and
 * reading organizations back.
 *
 * These take no principal: the ops CLI and host bootstrap call them before anyone can authenticate
 * (there is no member yet to authenticate as), and no /v2 operation exposes them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Auditor } from "./Auditor.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { MemberId, OrganizationId, RoleId } from "./Ids.js"
import * as Utf8 from "./internal/utf8.js"
import { LibraryStore } from "./LibraryStore.js"
import { Member } from "./Member.js"
import { MemberRepo } from "./MemberRepo.js"
import { nameFromEmail } from "./Members.js"
import { CreateOrganization, Organization } from "./Organization.js"
import { OrganizationRepo } from "./OrganizationRepo.js"
import * as Role from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * What creating an organization made: the organization, its two system roles and its first admin.
 *
 * @since 0.1.0
 * @category models
 */
export interface Created {
  readonly organization: Organization
  readonly roles: { readonly admin: Role.RoleRecord; readonly member: Role.RoleRecord }
  readonly admin: Member
}

/**
 * The organizations use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Organizations extends Context.Tag("@sightline/core/Organizations")<
  Organizations,
  Organizations.Service
>() {}

export declare namespace Organizations {
  /** Creating and reading organizations (no principal: see the module documentation). */
  export interface Service {
    /**
     * Creates an organization, its `admin` and `member` system roles and an admin member holding
     * `admin`, in one transaction. The input is decoded here (no http layer sits in front of the
     * CLI), so a malformed name or e-mail address is `InvalidRequest`.
     */
    readonly create: (input: typeof CreateOrganization.Encoded) => Effect.Effect<Created, Errors.InvalidRequest>
    /** The organization with this id. */
    readonly get: (id: OrganizationId) => Effect.Effect<Organization, Errors.NotFound>
    /** Every organization, oldest first. */
    readonly list: () => Effect.Effect<ReadonlyArray<Organization>>
  }
}

/**
 * A file every new organization's library starts with.
 *
 * @since 0.1.0
 * @category models
 */
export interface StarterFile {
  readonly path: string
  readonly text: string
}

/**
 * Options of the organizations use cases.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The files a new organization's library starts with, committed to main by its first admin
   * (the standalone server ships the DEMO dataset's semantic model). None when empty.
   */
  readonly starterLibrary: ReadonlyArray<StarterFile>
}

/**
 * Builds the organizations use cases over the repositories in context (and `LibraryStore` for a starter library).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const organizations = yield* OrganizationRepo
    const members = yield* MemberRepo
    const roles = yield* RoleRepo
    const tx = yield* Transaction
    const ids = yield* IdGenerator
    const auditor = yield* Auditor
    const store = yield* Effect.serviceOption(LibraryStore)
    if (options.starterLibrary.length > 0 && Option.isNone(store)) {
      return yield* Effect.dieMessage("Organizations: a starter library needs a LibraryStore")
    }
    const starter = HashMap.fromIterable(options.starterLibrary.map((f) => [f.path, Utf8.encodeText(f.text)] as const))

    const create = Traced.fn("Organizations.create")(function*(input: typeof CreateOrganization.Encoded) {
      const request = yield* Schema.decodeUnknown(CreateOrganization)(input).pipe(
        Effect.mapError((error) =>
          new Errors.InvalidRequest({
            // One line per problem (`adminEmail: must be an e-mail address`), readable on a terminal.
            message: ParseResult.ArrayFormatter.formatErrorSync(error)
              .map((issue) => `${issue.path.join(".")}: ${issue.message}`)
              .join("; ")
          })
        )
      )
      return yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const organization = new Organization({
          id: OrganizationId.make(yield* ids.uuid),
          name: request.name,
          created_at: now
        })
        yield* organizations.create(organization)
        const system = Role.systemRoles({
          organizationId: organization.id,
          adminId: RoleId.make(yield* ids.uuid),
          memberId: RoleId.make(yield* ids.uuid),
          now
        })
        const admin = new Member({
          id: MemberId.make(yield* ids.uuid),
          organization_id: organization.id,
          email: request.adminEmail,
          name: request.adminName ?? nameFromEmail(request.adminEmail),
          is_service_account: false,
          is_scim_managed: false,
          created_at: now
        })
        // A brand-new organization has no roles, members or assignments that could clash: any failure
        // here is a broken store, not something the caller could fix.
        yield* Effect.orDie(roles.create(system.admin))
        yield* Effect.orDie(roles.create(system.member))
        yield* Effect.orDie(members.create(admin))
        yield* Effect.orDie(members.assignRole(organization.id, admin.id, system.admin.id))
        // Nobody acted through the API: the entry is a system action, so later audits still show who
        // the first admin was and when the tenant came to be.
        yield* auditor.record({
          organizationId: organization.id,
          authMethod: "system",
          action: "member.invite",
          resourceType: "member",
          resourceId: admin.id,
          details: { email: admin.email, role: "admin" }
        })
        if (Option.isSome(store) && HashMap.size(starter) > 0) {
          const ref = yield* Effect.orDie(store.value.commit(organization.id, {
            message: "The starter library",
            author: admin.id,
            files: starter
          }))
          yield* Effect.orDie(store.value.setHead(organization.id, Option.none(), ref))
        }
        return { organization, roles: system, admin }
      }))
    })

    const get = Traced.fn("Organizations.get")(function*(id: OrganizationId) {
      return yield* Option.match(yield* organizations.get(id), {
        onNone: () => Effect.fail(new Errors.NotFound()),
        onSome: Effect.succeed
      })
    })

    const list = Traced.fn("Organizations.list")(function*() {
      return yield* organizations.list
    })

    return Organizations.of({ create, get, list })
  })

/**
 * Builds the organizations use cases with an empty starter library.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = makeWith({ starterLibrary: [] })

/**
 * The organizations use cases over the repositories, `Transaction`, `AuditLogRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Organizations, make)

/**
 * The organizations use cases with options (a starter library also needs `LibraryStore`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options) => Layer.effect(Organizations, makeWith(options))

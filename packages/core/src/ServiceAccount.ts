/**
 * Service accounts: non-human members that API keys are minted for (`targetMemberId`). A service
 * account is a `Member` with `is_service_account` set and a generated e-mail address, so it owns
 * keys, objects and audit entries exactly as a human does.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { MemberId, type OrganizationId, RoleId } from "./Ids.js"
import { Email, Member, roleNames } from "./Member.js"
import type { Role } from "./Role.js"

/**
 * The domain of generated service-account addresses: reserved (`.local`), so never deliverable.
 *
 * @since 0.1.0
 * @category constants
 */
export const emailDomain = "service-accounts.sightline.local"

/**
 * The body of `POST /v2/service-accounts`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateServiceAccount = Schema.Struct({
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100)),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(1000))),
  /** The roles the account starts with; may be empty (roles can be assigned later). */
  role_ids: Schema.Array(RoleId)
})
export type CreateServiceAccount = typeof CreateServiceAccount.Type

/**
 * The response of `POST /v2/service-accounts`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateServiceAccountResult = Schema.Struct({
  member_id: MemberId,
  email: Email
})
export type CreateServiceAccountResult = typeof CreateServiceAccountResult.Type

/**
 * A service account as listed by `GET /v2/service-accounts`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServiceAccount = Schema.Struct({
  id: MemberId,
  name: Schema.String,
  /** Empty when none was given. */
  description: Schema.String,
  email: Schema.String,
  /** Names of the account's roles, in alphabetical order (as in `GET /v2/members`). */
  roles: Schema.Array(Schema.String),
  created_at: Schema.DateTimeUtc
})
export type ServiceAccount = typeof ServiceAccount.Type

/**
 * The response of `GET /v2/service-accounts`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServiceAccountList = Schema.Struct({
  service_accounts: Schema.Array(ServiceAccount)
})
export type ServiceAccountList = typeof ServiceAccountList.Type

/**
 * The response of `DELETE /v2/service-accounts/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteServiceAccountResult = Schema.Struct({
  success: Schema.Boolean
})
export type DeleteServiceAccountResult = typeof DeleteServiceAccountResult.Type

const slugOf = (name: string): string => {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 40)
    .replace(/^-+|-+$/g, "")
  return slug === "" ? "service-account" : slug
}

/**
 * The generated address of a service account: `<slug of the name>-<last 12 hex digits of its id>@`
 * `service-accounts.sightline.local`. The id suffix keeps two accounts with the same name apart; the
 * last digits are used because they are random in a v4 UUID (and distinct in test ids).
 *
 * @since 0.1.0
 * @category utils
 */
export const emailFor = (name: string, id: MemberId): Email => `${slugOf(name)}-${id.slice(-12)}@${emailDomain}`

/**
 * Builds the member record of a new service account (its roles are assigned separately).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: MemberId
  readonly organizationId: OrganizationId
  readonly request: CreateServiceAccount
  readonly now: DateTime.Utc
}): Member =>
  new Member({
    id: options.id,
    organization_id: options.organizationId,
    email: emailFor(options.request.name, options.id),
    name: options.request.name,
    ...(options.request.description === undefined ? {} : { description: options.request.description }),
    is_service_account: true,
    is_scim_managed: false,
    created_at: options.now
  })

/**
 * The listing of a service account, given the roles it holds.
 *
 * @since 0.1.0
 * @category utils
 */
export const toListItem = (member: Member, roles: ReadonlyArray<Role>): ServiceAccount => ({
  id: member.id,
  name: member.name,
  description: member.description ?? "",
  email: member.email,
  roles: roleNames(roles),
  created_at: member.created_at
})

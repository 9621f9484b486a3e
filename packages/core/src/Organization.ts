/**
 * An organization: the tenant every other resource belongs to.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { OrganizationId } from "./Ids.js"
import { Email } from "./Member.js"

/**
 * An organization as stored and served.
 *
 * @since 0.1.0
 * @category models
 */
export class Organization extends Schema.Class<Organization>("@sightline/core/Organization")({
  id: OrganizationId,
  name: Schema.NonEmptyTrimmedString,
  created_at: Schema.DateTimeUtc
}) {}

// Names typed on a command line: surrounding spaces are trimmed rather than refused.
const TrimmedName = Schema.Trim.pipe(Schema.compose(Schema.NonEmptyTrimmedString), Schema.maxLength(200))

/**
 * The input of creating an organization (the ops CLI and host bootstrap; an in-process input, so
 * camelCase): its name and its first admin, without whom nobody could administer it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateOrganization = Schema.Struct({
  name: TrimmedName,
  adminEmail: Email,
  /** The admin's display name; the local part of the e-mail address when omitted. */
  adminName: Schema.optional(TrimmedName)
})
export type CreateOrganization = typeof CreateOrganization.Type

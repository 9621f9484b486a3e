/**
 * An organization: the tenant every other resource belongs to.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { OrganizationId } from "./Ids.js"

/** An organization as stored and served. */
export class Organization extends Schema.Class<Organization>("@sightline/core/Organization")({
  id: OrganizationId,
  name: Schema.NonEmptyTrimmedString,
  created_at: Schema.DateTimeUtc
}) {}

/** The body of creating an organization (the ops CLI and host applications). */
export const CreateOrganization = Schema.Struct({
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))
})
export type CreateOrganization = typeof CreateOrganization.Type

/**
 * A member of an organization: a human, or a service account (a non-human member that keys can be
 * minted for).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { MemberId, OrganizationId } from "./Ids.js"

/** A member as stored. Role assignments live beside it (see `MemberRepo`). */
export class Member extends Schema.Class<Member>("@sightline/core/Member")({
  id: MemberId,
  organization_id: OrganizationId,
  email: Schema.String,
  name: Schema.String,
  is_service_account: Schema.Boolean,
  is_scim_managed: Schema.Boolean,
  /** Set when the member was soft-deleted: the member and every key it owns stop working at once. */
  deleted_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
}) {}

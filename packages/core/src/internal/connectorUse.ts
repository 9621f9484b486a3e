/**
 * The one rule of "may the caller use these connectors", shared by every use case whose request or
 * stored object names connectors (chats, playbooks, agents, apps), so none of them imports another
 * use case for it.
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Connector from "../Connector.js"
import type { ConnectorRepo } from "../ConnectorRepo.js"
import * as Decision from "../Decision.js"
import * as EndUser from "../EndUser.js"
import { InvalidRequest, type PermissionDenied, type Unauthenticated } from "../Errors.js"
import type { ConnectorId, OrganizationId } from "../Ids.js"
import * as Policy from "../Policy.js"

/**
 * A stored connector's access as the policy engine reads it. The creator (`owner_id`) owns through
 * ownership, which counts even for a key without full member access, but only while its owner grant
 * stands: the grant list stays the one place that says who may use a connector, so an owner can be
 * removed by another owner like any other grantee.
 */
export const policyAccess = (
  record: Connector.ConnectorRecord,
  access: Connector.ConnectorAccess,
  now: DateTime.Utc
): Policy.ConnectorAccess => {
  const creatorOwns = access.grants.some((grant) =>
    grant.member_id === record.owner_id && grant.access_type === "owner" &&
    (grant.expires_at === undefined || DateTime.lessThan(now, grant.expires_at))
  )
  return {
    id: record.id,
    organizationId: record.organization_id,
    ...(creatorOwns ? { ownerId: record.owner_id } : {}),
    isPublic: access.is_public,
    grants: access.grants.map((grant): Policy.Grant =>
      grant.member_id !== undefined
        ? { memberId: grant.member_id, accessType: grant.access_type, expiresAt: grant.expires_at }
        : { roleId: grant.role_id!, accessType: grant.access_type, expiresAt: grant.expires_at }
    )
  }
}

/** The read decision on each connector of `ids` (deduplicated, in order); a missing one is `not_found`. */
const decisions = (
  repo: ConnectorRepo.Service,
  principal: Policy.Principal,
  ids: ReadonlyArray<ConnectorId>,
  now: DateTime.Utc
): Effect.Effect<ReadonlyArray<readonly [ConnectorId, Policy.ObjectDecision]>> =>
  Effect.forEach(Arr.dedupe(ids), (id) =>
    Effect.map(
      Effect.all([repo.get(principal.organizationId, id), repo.getAccess(principal.organizationId, id)]),
      ([connector, access]): readonly [ConnectorId, Policy.ObjectDecision] => [
        id,
        // An end user's session reaches only the connectors it names, as if the others did not exist.
        Option.isSome(connector) && Option.isSome(access) &&
          EndUser.allows(Policy.endUserOf(principal)?.connectorIds, id)
          ? Policy.canRead(principal, "connector", policyAccess(connector.value, access.value, now), now)
          : Decision.deny("not_found", "not found")
      ]
    ))

/** The connectors of `ids` the caller may not use, for any reason (a stored object's check, such as a playbook's run). */
export const unusable = (
  repo: ConnectorRepo.Service,
  principal: Policy.Principal,
  ids: ReadonlyArray<ConnectorId>,
  now: DateTime.Utc
): Effect.Effect<ReadonlyArray<ConnectorId>> =>
  Effect.map(
    decisions(repo, principal, ids, now),
    Arr.filterMap(([id, decision]) => Decision.isDeny(decision) ? Option.some(id) : Option.none())
  )

/** The organization's connectors the caller may use (a change's checks name only these, with their databases' words). */
export const usable = (
  repo: ConnectorRepo.Service,
  principal: Policy.Principal,
  organizationId: OrganizationId,
  now: DateTime.Utc
): Effect.Effect<ReadonlyArray<Connector.ConnectorRecord>> =>
  Effect.gen(function*() {
    const all = yield* repo.list(organizationId)
    const hidden = new Set(yield* unusable(repo, principal, all.map((c) => c.id), now))
    return all.filter((c) => !hidden.has(c.id))
  })

/**
 * Why the caller may not run SQL that it, or a model for it, wrote on this connector; `undefined`
 * when it may. A key with client attributes (row-level security a host handed to its end user)
 * writes no SQL of its own where the database does not enforce the attributes: binding
 * `_svc.client_attributes_json` binds nothing in SQL that leaves it out. Saved queries of the
 * Context Library, which the organization reviewed, still run.
 */
export const rawSqlRefusal = (principal: Policy.Principal, record: Connector.ConnectorRecord): string | undefined =>
  Policy.clientAttributesJson(principal) !== "{}" && !Connector.enforcesClientAttributes(record)
    ? `connector ${record.id} does not enforce this key's client attributes in the database (signed session ` +
      `metadata), so SQL written for this key cannot run on it: use a saved query of the Context Library`
    : undefined

/**
 * Why the caller may not run SQL that it, or a model at its request, writes now (`run_sql`, a
 * sandbox's query, a pin of such a cell); `undefined` when it may. An end user's session never
 * does; anyone else as `rawSqlRefusal` says. Reviewed SQL (a dashboard's tile) is `rawSqlRefusal`'s alone.
 */
export const writtenSqlRefusal = (principal: Policy.Principal, record: Connector.ConnectorRecord): string | undefined =>
  Policy.endUserOf(principal) !== undefined
    ? "an end user's session writes no SQL of its own: ask a question, or use a saved query of the Context Library"
    : rawSqlRefusal(principal, record)

/** Missing and inaccessible read the same, so the message never tells which ids exist. */
export const unusableMessage = (field: string, ids: ReadonlyArray<ConnectorId>): string =>
  `${field}: connector ${ids.join(", ")} not found or not accessible`

/**
 * Fails with `InvalidRequest` naming every connector of `ids` the caller may not use, for requests
 * that name connectors. Missing and invisible connectors read the same; a caller who may not use
 * connectors at all (no `connector:read`, or no longer authenticated) gets that error instead.
 */
export const requireUsable = (
  repo: ConnectorRepo.Service,
  principal: Policy.Principal,
  ids: ReadonlyArray<ConnectorId>,
  now: DateTime.Utc,
  field: string
): Effect.Effect<void, Unauthenticated | PermissionDenied | InvalidRequest> =>
  Effect.flatMap(decisions(repo, principal, ids, now), (decided): Effect.Effect<
    void,
    Unauthenticated | PermissionDenied | InvalidRequest
  > => {
    const hidden: Array<ConnectorId> = []
    for (const [id, decision] of decided) {
      if (decision._tag === "Allow") continue
      const code = decision.code
      if (code !== "not_found") return Effect.fail(Decision.toError(Decision.deny(code, decision.reason)))
      hidden.push(id)
    }
    return hidden.length === 0
      ? Effect.void
      : Effect.fail(new InvalidRequest({ message: unusableMessage(field, hidden) }))
  })

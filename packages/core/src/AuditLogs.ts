/**
 * The audit log read use case (`GET /v2/audit-logs`). Entries are written by the use cases that
 * make the changes (`Auditor`, inside their transactions); this module only reads them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AuditLog from "./AuditLog.js"
import { AuditLogRepo } from "./AuditLogRepo.js"
import { enforce } from "./Decision.js"
import type { InvalidRequest, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/** The audit log read use case. */
export class AuditLogs extends Context.Tag("@sightline/core/AuditLogs")<AuditLogs, AuditLogs.Service>() {}

export declare namespace AuditLogs {
  /** The operation of `GET /v2/audit-logs`. */
  export interface Service {
    /**
     * A page of the organization's entries, newest first (`organization:read`), filtered by
     * `action` and `actor_id`. A cursor that is not one of ours is `InvalidRequest`; an `actor_id`
     * of another organization simply matches nothing.
     */
    readonly list: (
      principal: Policy.Principal,
      query: AuditLog.ListAuditLogs
    ) => Effect.Effect<AuditLog.ListAuditLogsResponse, Unauthenticated | PermissionDenied | InvalidRequest>
  }
}

/** Builds the audit log read use case over the `AuditLogRepo` in context. */
export const make = Effect.gen(function*() {
  const repo = yield* AuditLogRepo

  const list = Traced.fn("AuditLogs.list")(function*(principal: Policy.Principal, query: AuditLog.ListAuditLogs) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const after = query.cursor === undefined ? undefined : yield* Pagination.decodeCursor(query.cursor, Schema.UUID)
    const page = yield* repo.list(principal.organizationId, {
      limit: query.page_size,
      after,
      action: query.action,
      actorId: query.actor_id
    })
    return {
      entries: page.items.map(AuditLog.toEntry),
      ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
    }
  })

  return AuditLogs.of({ list })
})

/** The audit log read use case over the `AuditLogRepo` in context. */
export const layer = Layer.effect(AuditLogs, make)

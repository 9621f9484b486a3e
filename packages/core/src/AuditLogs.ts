/**
 * The audit log read use cases (`GET /v2/audit-logs`, and `GET /v2/usage` summed from it). Entries are written by the use cases that
 * make the changes (`Auditor`, inside their transactions); this module only reads them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AuditLog from "./AuditLog.js"
import { AuditLogRepo } from "./AuditLogRepo.js"
import { enforce } from "./Decision.js"
import { InvalidRequest, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import * as Usage from "./Usage.js"

/**
 * The audit log read use case.
 *
 * @since 0.1.0
 * @category services
 */
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
    /**
     * `GET /v2/usage`: the models' tokens of a period (`organization:read`), by member, API key or
     * model, summed from the `model.usage` entries. A period that ends before it starts is
     * `InvalidRequest`.
     */
    readonly usage: (
      principal: Policy.Principal,
      params: Usage.UsageParams
    ) => Effect.Effect<Usage.UsageResponse, Unauthenticated | PermissionDenied | InvalidRequest>
  }
}

/**
 * Builds the audit log read use case over the `AuditLogRepo` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
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

  const usage = Traced.fn("AuditLogs.usage")(function*(principal: Policy.Principal, params: Usage.UsageParams) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const period = Usage.periodOf(params, yield* DateTime.now)
    if (!DateTime.lessThan(period.from, period.to)) {
      return yield* new InvalidRequest({ message: "from must be before to" })
    }
    return Usage.group(yield* repo.usage(principal.organizationId, period), params.group_by, period)
  })

  return AuditLogs.of({ list, usage })
})

/**
 * The audit log read use case over the `AuditLogRepo` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(AuditLogs, make)

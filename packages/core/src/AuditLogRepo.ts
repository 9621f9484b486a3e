/**
 * The audit log repository port: an append-only log per organization.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { Action, AuditLogRecord } from "./AuditLog.js"
import type { AuditLogEntryId, MemberId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/** Stores audit log entries. */
export class AuditLogRepo extends Context.Tag("@sightline/core/AuditLogRepo")<
  AuditLogRepo,
  AuditLogRepo.Service
>() {}

export declare namespace AuditLogRepo {
  /** Which entries of an organization a listing returns, and which page of them. */
  export interface ListOptions extends Pagination.PageRequest {
    /** Only entries of this action. */
    readonly action?: Action | undefined
    /** Only entries of this actor. */
    readonly actorId?: MemberId | undefined
  }

  /** Audit log storage. Entries are never updated or deleted. */
  export interface Service {
    /** Appends an entry. Ids are generated, so a duplicate id is a defect, not a domain error. */
    readonly append: (record: AuditLogRecord) => Effect.Effect<void>
    /** A page of the organization's entries, newest first (`created_at` desc, then id desc). */
    readonly list: (
      organizationId: OrganizationId,
      options: ListOptions
    ) => Effect.Effect<Pagination.Page<AuditLogRecord>>
  }
}

/** The position of an entry in listings (newest first): its time and id. */
export const keyset = (record: AuditLogRecord): Pagination.Keyset => ({
  at: DateTime.formatIso(record.created_at),
  id: record.id
})

/** Audit log entries in memory. */
export const layerMemory: Layer.Layer<AuditLogRepo, never, MemoryState> = Layer.effect(
  AuditLogRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<AuditLogEntryId, AuditLogRecord>())
    return AuditLogRepo.of({
      append: (record) =>
        state.run(Effect.flatMap(Ref.get(table), (rows) =>
          HashMap.has(rows, record.id)
            ? Effect.dieMessage(`duplicate audit log entry id ${record.id}`)
            : Ref.set(table, HashMap.set(rows, record.id, record)))),
      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId &&
            (options.action === undefined || row.action === options.action) &&
            (options.actorId === undefined || row.actor_id === options.actorId)
          )
          return Pagination.pageInMemory(matching, options, keyset)
        }))
    })
  })
)

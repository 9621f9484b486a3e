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
import { ApiKeyId, type AuditLogEntryId, type MemberId, type OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"
import type * as Usage from "./Usage.js"

/**
 * Stores audit log entries.
 *
 * @since 0.1.0
 * @category services
 */
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
    /**
     * The `model.usage` entries created in `[from, to)`, summed per member, API key and model: runs,
     * generations (`details.calls`) and tokens (`details.input`, `details.output`).
     */
    readonly usage: (
      organizationId: OrganizationId,
      period: { readonly from: DateTime.Utc; readonly to: DateTime.Utc }
    ) => Effect.Effect<ReadonlyArray<Usage.Sums>>
  }
}

/**
 * The position of an entry in listings (newest first): its time and id.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (record: AuditLogRecord): Pagination.Keyset => ({
  at: DateTime.formatIso(record.created_at),
  id: record.id
})

/** What a `model.usage` entry's details say, read leniently (as the SQL store's sums do). */
const usageOf = (record: AuditLogRecord) => {
  const details = record.details as {
    readonly model?: unknown
    readonly api_key_id?: unknown
    readonly input?: unknown
    readonly output?: unknown
    readonly calls?: unknown
  }
  const count = (value: unknown) => (typeof value === "number" ? value : 0)
  return {
    model: typeof details.model === "string" ? details.model : "",
    apiKeyId: typeof details.api_key_id === "string" ? ApiKeyId.make(details.api_key_id) : undefined,
    input: count(details.input),
    output: count(details.output),
    calls: Array.isArray(details.calls) ? details.calls.length : 0
  }
}

/**
 * Audit log entries in memory.
 *
 * @since 0.1.0
 * @category layers
 */
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
        })),
      usage: (organizationId, period) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const sums = new Map<string, Usage.Sums>()
          for (const row of HashMap.values(rows)) {
            if (
              row.organization_id !== organizationId || row.action !== "model.usage" ||
              DateTime.lessThan(row.created_at, period.from) || !DateTime.lessThan(row.created_at, period.to)
            ) continue
            const entry = usageOf(row)
            const key = `${row.actor_id ?? ""}|${entry.apiKeyId ?? ""}|${entry.model}`
            const sum = sums.get(key)
            sums.set(key, {
              ...(row.actor_id === undefined ? {} : { memberId: row.actor_id }),
              ...(entry.apiKeyId === undefined ? {} : { apiKeyId: entry.apiKeyId }),
              model: entry.model,
              answers: (sum?.answers ?? 0) + 1,
              calls: (sum?.calls ?? 0) + entry.calls,
              input: (sum?.input ?? 0) + entry.input,
              output: (sum?.output ?? 0) + entry.output
            })
          }
          return [...sums.values()]
        }))
    })
  })
)

/**
 * The change repository port: changes, their revisions and their approvals.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import type { ApprovalRecord, ChangeRecord, ChangeStatus, Revision, StatusCounts } from "./Change.js"
import { emptyCounts } from "./Change.js"
import { Conflict } from "./Errors.js"
import type { ChangeId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores changes, revisions and approvals.
 *
 * @since 0.1.0
 * @category services
 */
export class ChangeRepo extends Context.Tag("@sightline/core/ChangeRepo")<ChangeRepo, ChangeRepo.Service>() {}

export declare namespace ChangeRepo {
  /** Which changes a count or a listing includes. */
  export interface Filter {
    /** Changes merged by an auto-approve rule are left out unless true. */
    readonly includeAutoApproved: boolean
    /**
     * Read scoping: keeps only changes the caller may read (use cases pass a test over
     * `touched_paths` with the OWNERS tree of main). Applied before paging, so pages stay full.
     */
    readonly readable: (change: ChangeRecord) => boolean
  }

  /** One keyset page of a listing, newest first (`created_at` desc, then `id` desc). */
  export interface ListOptions extends Filter, Pagination.PageRequest {
    /** Only these statuses; empty means every status. */
    readonly statuses: ReadonlyArray<ChangeStatus>
  }

  /** Change storage. Numbers are unique per organization. */
  export interface Service {
    /** Stores a new change; a number already taken in the organization is a `Conflict`. */
    readonly create: (change: ChangeRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: ChangeId) => Effect.Effect<Option.Option<ChangeRecord>>
    /** `get` with a row lock (inside `withTransaction`), so approvals and merges of a change queue up. */
    readonly getForUpdate: (organizationId: OrganizationId, id: ChangeId) => Effect.Effect<Option.Option<ChangeRecord>>
    readonly getByNumber: (organizationId: OrganizationId, number: number) => Effect.Effect<Option.Option<ChangeRecord>>
    /** Reserves the next change number of the organization: never handed out twice, increasing. */
    readonly nextNumber: (organizationId: OrganizationId) => Effect.Effect<number>
    /** Replaces a stored change (matched by organization and id). */
    readonly update: (change: ChangeRecord) => Effect.Effect<void>
    readonly list: (
      organizationId: OrganizationId,
      options: ListOptions
    ) => Effect.Effect<Pagination.Page<ChangeRecord>>
    /** How many changes of each status pass the filter. */
    readonly counts: (organizationId: OrganizationId, filter: Filter) => Effect.Effect<StatusCounts>
    /** Records a revision; a revision number already recorded for the change is a `Conflict`. */
    readonly addRevision: (revision: Revision) => Effect.Effect<void, Conflict>
    /** Every revision of a change, oldest first. */
    readonly revisions: (organizationId: OrganizationId, changeId: ChangeId) => Effect.Effect<ReadonlyArray<Revision>>
    /**
     * Records an approval; approving the same revision twice is a no-op that reports
     * `alreadyApproved` (the first approval and its time are kept).
     */
    readonly addApproval: (approval: ApprovalRecord) => Effect.Effect<{ readonly alreadyApproved: boolean }>
    /** Every approval of a change (all revisions), oldest first. */
    readonly approvals: (
      organizationId: OrganizationId,
      changeId: ChangeId
    ) => Effect.Effect<ReadonlyArray<ApprovalRecord>>
  }
}

/**
 * The keyset position of a change in listings.
 *
 * @since 0.1.0
 * @category utils
 */
export const keysetOf = (change: ChangeRecord): Pagination.Keyset => ({
  at: DateTime.formatIso(change.created_at),
  id: change.id
})

interface Tables {
  readonly changes: HashMap.HashMap<ChangeId, ChangeRecord>
  readonly counters: HashMap.HashMap<OrganizationId, number>
  readonly revisions: HashMap.HashMap<string, Revision>
  readonly approvals: HashMap.HashMap<string, ApprovalRecord>
}

const byCreatedAt = Order.mapInput(DateTime.Order, (r: { readonly created_at: DateTime.Utc }) => r.created_at)

/**
 * Changes in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ChangeRepo, never, MemoryState> = Layer.effect(
  ChangeRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({
      changes: HashMap.empty(),
      counters: HashMap.empty(),
      revisions: HashMap.empty(),
      approvals: HashMap.empty()
    })
    const inOrg = (organizationId: OrganizationId) => (change: ChangeRecord) =>
      change.organization_id === organizationId
    const orgChanges = (tables: Tables, organizationId: OrganizationId) =>
      Arr.filter(Arr.fromIterable(HashMap.values(tables.changes)), inOrg(organizationId))
    const get = (organizationId: OrganizationId, id: ChangeId) =>
      state.run(
        Effect.map(Ref.get(table), (t) => HashMap.get(t.changes, id).pipe(Option.filter(inOrg(organizationId))))
      )
    const passes = (filter: ChangeRepo.Filter) => (change: ChangeRecord) =>
      (filter.includeAutoApproved || !change.auto_approved) && filter.readable(change)

    return {
      create: (change) =>
        state.run(Effect.gen(function*() {
          const tables = yield* Ref.get(table)
          if (HashMap.has(tables.changes, change.id)) {
            return yield* new Conflict({ message: `change ${change.id} already exists` })
          }
          if (orgChanges(tables, change.organization_id).some((c) => c.number === change.number)) {
            return yield* new Conflict({ message: `change number ${change.number} is already taken` })
          }
          yield* Ref.set(table, { ...tables, changes: HashMap.set(tables.changes, change.id, change) })
        })),
      get,
      getForUpdate: get,
      getByNumber: (organizationId, number) =>
        state.run(
          Effect.map(Ref.get(table), (t) => Arr.findFirst(orgChanges(t, organizationId), (c) => c.number === number))
        ),
      nextNumber: (organizationId) =>
        state.run(Ref.modify(table, (t) => {
          // Numbers also stay above any change stored with an explicit number.
          const highest = Math.max(
            Option.getOrElse(HashMap.get(t.counters, organizationId), () => 0),
            ...orgChanges(t, organizationId).map((c) => c.number)
          )
          return [highest + 1, { ...t, counters: HashMap.set(t.counters, organizationId, highest + 1) }]
        })),
      update: (change) =>
        state.run(
          Ref.update(table, (t) =>
            Option.match(HashMap.get(t.changes, change.id).pipe(Option.filter(inOrg(change.organization_id))), {
              onNone: () =>
                t,
              onSome: () => ({ ...t, changes: HashMap.set(t.changes, change.id, change) })
            }))
        ),
      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (t) => {
          const rows = orgChanges(t, organizationId).filter((c) =>
            passes(options)(c) && (options.statuses.length === 0 || options.statuses.includes(c.status))
          )
          return Pagination.pageInMemory(rows, options, keysetOf)
        })),
      counts: (organizationId, filter) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          orgChanges(t, organizationId)
            .filter(passes(filter))
            .reduce((counts, c) => ({ ...counts, [c.status]: counts[c.status] + 1 }), emptyCounts))),
      addRevision: (revision) =>
        state.run(Effect.gen(function*() {
          const key = `${revision.change_id}/${revision.revision}`
          const tables = yield* Ref.get(table)
          if (HashMap.has(tables.revisions, key)) {
            return yield* new Conflict({
              message: `revision ${revision.revision} of change ${revision.change_id} already exists`
            })
          }
          yield* Ref.set(table, { ...tables, revisions: HashMap.set(tables.revisions, key, revision) })
        })),
      revisions: (organizationId, changeId) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          Arr.sort(
            Arr.filter(
              Arr.fromIterable(HashMap.values(t.revisions)),
              (r) => r.organization_id === organizationId && r.change_id === changeId
            ),
            Order.mapInput(Order.number, (r: Revision) => r.revision)
          ))),
      addApproval: (approval) =>
        state.run(Ref.modify(table, (t): readonly [{ readonly alreadyApproved: boolean }, Tables] => {
          const key = `${approval.change_id}/${approval.revision}/${approval.approver_id}`
          return HashMap.has(t.approvals, key)
            ? [{ alreadyApproved: true }, t]
            : [{ alreadyApproved: false }, { ...t, approvals: HashMap.set(t.approvals, key, approval) }]
        })),
      approvals: (organizationId, changeId) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          Arr.sort(
            Arr.filter(
              Arr.fromIterable(HashMap.values(t.approvals)),
              (a) => a.organization_id === organizationId && a.change_id === changeId
            ),
            byCreatedAt
          )))
    }
  })
)

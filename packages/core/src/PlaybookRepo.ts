/**
 * The playbook repository port: playbooks and the reports their runs produced.
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
import type { SortDirection } from "./Chat.js"
import { Conflict, NotFound } from "./Errors.js"
import type { ConnectorId, OrganizationId, PlaybookId } from "./Ids.js"
import { PlaybookRecord, type PlaybookSortField, type PlaybookStatus } from "./Playbook.js"
import { isDue } from "./Playbook.js"
import type { ReportRecord } from "./Report.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores playbooks and their reports.
 *
 * @since 0.1.0
 * @category services
 */
export class PlaybookRepo extends Context.Tag("@sightline/core/PlaybookRepo")<PlaybookRepo, PlaybookRepo.Service>() {}

export declare namespace PlaybookRepo {
  /** Which playbooks a listing returns. */
  export interface ListOptions {
    readonly limit: number
    readonly offset: number
    /** A case-insensitive literal substring of the name or the prompt. Empty or omitted: no filter. */
    readonly searchTerm?: string | undefined
    /** `name` sorts case-insensitively; ties are broken by id in the same direction. */
    readonly sortBy: PlaybookSortField
    readonly sortDirection: SortDirection
    readonly status?: PlaybookStatus | undefined
    /** Only the playbooks made in this audience (`Audience`; `""` is the audience without attributes). */
    readonly audience?: string | undefined
  }

  /** A page of playbooks and how many match in all. */
  export interface ListResult {
    readonly rows: ReadonlyArray<PlaybookRecord>
    readonly totalCount: number
  }

  /** A page of reports (newest first) and how many the playbook has. */
  export interface ReportPage {
    readonly reports: ReadonlyArray<ReportRecord>
    readonly totalCount: number
  }

  /** Playbook storage. Ids are unique across organizations. */
  export interface Service {
    /** Stores a new playbook; an id that already exists is a `Conflict`. */
    readonly create: (playbook: PlaybookRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: PlaybookId) => Effect.Effect<Option.Option<PlaybookRecord>>
    /** `get` that locks the playbook until the surrounding transaction ends (update, deploy, a scheduled firing). */
    readonly getForUpdate: (
      organizationId: OrganizationId,
      id: PlaybookId
    ) => Effect.Effect<Option.Option<PlaybookRecord>>
    readonly list: (organizationId: OrganizationId, options: ListOptions) => Effect.Effect<ListResult>
    /** Replaces a stored playbook (matched by organization and id); `NotFound` when there is none. */
    readonly update: (playbook: PlaybookRecord) => Effect.Effect<void, NotFound>
    /** Deletes a playbook and its reports; `NotFound` when the organization has no such playbook. */
    readonly delete: (organizationId: OrganizationId, id: PlaybookId) => Effect.Effect<void, NotFound>
    /** Removes a deleted connector from every playbook of the organization that names it (`updated_at` → `at`). */
    readonly detachConnector: (
      organizationId: OrganizationId,
      connectorId: ConnectorId,
      at: DateTime.Utc
    ) => Effect.Effect<void>

    /** Stores a report of a playbook of its organization (else `NotFound`); an existing id is a `Conflict`. */
    readonly addReport: (report: ReportRecord) => Effect.Effect<void, NotFound | Conflict>
    /** A page of a playbook's reports, newest first (`created_at` desc, then id desc). */
    readonly listReports: (
      organizationId: OrganizationId,
      playbookId: PlaybookId,
      page: { readonly limit: number; readonly offset: number }
    ) => Effect.Effect<ReportPage>
    /**
     * The playbook with a page of its reports, as `get` and `listReports` would find them, in one
     * read: the page and its total are of the same moment (one statement in SQL). None when the
     * organization has no such playbook.
     */
    readonly getWithReports: (
      organizationId: OrganizationId,
      id: PlaybookId,
      page: { readonly limit: number; readonly offset: number }
    ) => Effect.Effect<Option.Option<{ readonly playbook: PlaybookRecord; readonly page: ReportPage }>>

    /**
     * Deployed playbooks whose schedule is due (`next_run_at <= now`), earliest first, at most `limit`,
     * across every organization: the scheduler's only read, and the only one not scoped to an
     * organization. The scheduler re-reads each with `getForUpdate` before firing it, so that one
     * process fires a given time once.
     */
    readonly listDue: (now: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<PlaybookRecord>>
  }
}

const byId = Order.mapInput(Order.string, (playbook: PlaybookRecord) => playbook.id)

const playbookOrder = (sortBy: PlaybookSortField, direction: SortDirection): Order.Order<PlaybookRecord> => {
  const key: Order.Order<PlaybookRecord> = sortBy === "name"
    ? Order.mapInput(Order.string, (playbook) => playbook.name.toLowerCase())
    : sortBy === "created_at"
    ? Order.mapInput(DateTime.Order, (playbook) => playbook.created_at)
    : Order.mapInput(DateTime.Order, (playbook) => playbook.updated_at)
  const order = Order.combine(key, byId)
  return direction === "asc" ? order : Order.reverse(order)
}

const reportsNewestFirst: Order.Order<ReportRecord> = Order.reverse(
  Order.combine(
    Order.mapInput(DateTime.Order, (report: ReportRecord) => report.created_at),
    Order.mapInput(Order.string, (report: ReportRecord) => report.id)
  )
)

const dueOrder: Order.Order<PlaybookRecord> = Order.combine(
  Order.mapInput(DateTime.Order, (playbook: PlaybookRecord) => playbook.next_run_at!),
  byId
)

const includesFolded = (text: string, term: string) => text.toLowerCase().includes(term.toLowerCase())

interface Tables {
  readonly playbooks: HashMap.HashMap<PlaybookId, PlaybookRecord>
  readonly reports: ReadonlyArray<ReportRecord>
}

/**
 * Playbooks in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<PlaybookRepo, never, MemoryState> = Layer.effect(
  PlaybookRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({ playbooks: HashMap.empty(), reports: [] })

    const find = (tables: Tables, organizationId: OrganizationId, id: PlaybookId) =>
      HashMap.get(tables.playbooks, id).pipe(Option.filter((p) => p.organization_id === organizationId))

    const get = (organizationId: OrganizationId, id: PlaybookId) =>
      state.run(Effect.map(Ref.get(table), (tables) => find(tables, organizationId, id)))

    const notFound = (id: PlaybookId) => new NotFound({ message: `playbook ${id} not found` })

    const reportPage = (
      tables: Tables,
      organizationId: OrganizationId,
      playbookId: PlaybookId,
      page: { readonly limit: number; readonly offset: number }
    ): PlaybookRepo.ReportPage => {
      const reports = Arr.sort(
        tables.reports.filter((r) => r.organization_id === organizationId && r.playbook_id === playbookId),
        reportsNewestFirst
      )
      return { reports: reports.slice(page.offset, page.offset + page.limit), totalCount: reports.length }
    }

    return {
      create: (playbook) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) =>
          HashMap.has(tables.playbooks, playbook.id)
            ? Effect.fail(new Conflict({ message: `playbook ${playbook.id} already exists` }))
            : Ref.set(table, { ...tables, playbooks: HashMap.set(tables.playbooks, playbook.id, playbook) }))),

      get,
      getForUpdate: get,

      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (tables) => {
          const term = options.searchTerm ?? ""
          const matches = Array.from(HashMap.values(tables.playbooks)).filter((p) =>
            p.organization_id === organizationId &&
            (options.status === undefined || p.status === options.status) &&
            (options.audience === undefined || (p.audience ?? "") === options.audience) &&
            (term === "" || includesFolded(p.name, term) || includesFolded(p.prompt, term))
          )
          const sorted = Arr.sort(matches, playbookOrder(options.sortBy, options.sortDirection))
          return { rows: sorted.slice(options.offset, options.offset + options.limit), totalCount: matches.length }
        })),

      update: (playbook) =>
        state.run(
          Effect.flatMap(Ref.get(table), (tables) =>
            Option.isSome(find(tables, playbook.organization_id, playbook.id))
              ? Ref.set(table, { ...tables, playbooks: HashMap.set(tables.playbooks, playbook.id, playbook) })
              : Effect.fail(notFound(playbook.id)))
        ),

      detachConnector: (organizationId, connectorId, at) =>
        state.run(Ref.update(table, (tables) => ({
          ...tables,
          playbooks: HashMap.map(tables.playbooks, (playbook) =>
            playbook.organization_id === organizationId && playbook.connector_ids.includes(connectorId)
              ? new PlaybookRecord({
                ...playbook,
                connector_ids: playbook.connector_ids.filter((id) =>
                  id !== connectorId
                ),
                updated_at: at
              })
              : playbook)
        }))),

      delete: (organizationId, id) =>
        state.run(Effect.flatMap(Ref.get(table), (tables) =>
          Option.isSome(find(tables, organizationId, id))
            ? Ref.set(table, {
              playbooks: HashMap.remove(tables.playbooks, id),
              reports: tables.reports.filter((r) => r.playbook_id !== id)
            })
            : Effect.fail(notFound(id)))),

      addReport: (report) =>
        state.run(Effect.flatMap(Ref.get(table), (tables): Effect.Effect<void, NotFound | Conflict> => {
          if (Option.isNone(find(tables, report.organization_id, report.playbook_id))) {
            return Effect.fail(notFound(report.playbook_id))
          }
          if (tables.reports.some((r) => r.id === report.id)) {
            return Effect.fail(new Conflict({ message: `report ${report.id} already exists` }))
          }
          return Ref.set(table, { ...tables, reports: [...tables.reports, report] })
        })),

      listReports: (organizationId, playbookId, page) =>
        state.run(Effect.map(Ref.get(table), (tables) => reportPage(tables, organizationId, playbookId, page))),

      getWithReports: (organizationId, id, page) =>
        state.run(Effect.map(Ref.get(table), (tables) =>
          Option.map(find(tables, organizationId, id), (playbook) => ({
            playbook,
            page: reportPage(tables, organizationId, id, page)
          })))),

      listDue: (now, limit) =>
        state.run(
          Effect.map(Ref.get(table), (tables) =>
            Arr.sort(
              Array.from(HashMap.values(tables.playbooks)).filter((p) => isDue(p, now)),
              dueOrder
            ).slice(0, limit))
        )
    }
  })
)

/**
 * The contract every `PlaybookRepo` implementation must meet.
 *
 * It runs on a shared, non-empty database: each test makes its own organizations, members and chats
 * with random ids and never assumes a table is empty. `listDue` reads across organizations, so its
 * test only looks at its own rows and at properties that hold whatever else is stored.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Chat from "../Chat.js"
import { ChatRepo } from "../ChatRepo.js"
import { ChatId, ConnectorId, type MemberId, type OrganizationId, PlaybookId, ReportId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Playbook from "../Playbook.js"
import { PlaybookRepo } from "../PlaybookRepo.js"
import * as Report from "../Report.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * Every port the suite needs (foreign keys need organizations, members, and chats for reports).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = PlaybookRepo | ChatRepo | OrganizationRepo | MemberRepo | Transaction

const base = DateTime.unsafeMake("2026-01-15T09:30:00.123Z")
const at = (seconds: number) => DateTime.add(base, { seconds })

// Records are compared in their encoded form: timestamps and branded ids compare as the strings they store.
const encode = (record: Playbook.PlaybookRecord) => Schema.encodeSync(Playbook.PlaybookRecord)(record)
const encodeReport = (record: Report.ReportRecord) => Schema.encodeSync(Report.ReportRecord)(record)

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

const playbook = (
  organizationId: OrganizationId,
  ownerId: MemberId,
  options: Partial<Playbook.PlaybookRecord> = {}
): Playbook.PlaybookRecord =>
  new Playbook.PlaybookRecord({
    ...Playbook.make({ id: PlaybookId.make(Fixtures.uuid()), organizationId, ownerId, at: base }),
    ...options
  })

const full = (organizationId: OrganizationId, ownerId: MemberId): Playbook.PlaybookRecord =>
  playbook(organizationId, ownerId, {
    name: "Weekly revenue — ünïcode",
    prompt: "Summarize revenue by region.\nInclude a chart.",
    status: "deployed",
    connector_ids: [ConnectorId.make(3), ConnectorId.make(1)],
    cron_string: "0 9 * * 1",
    email_addresses: ["ada@example.com", "grace@example.org"],
    chat_channel_id: "C0123",
    dashboard: "sales",
    dataset_ids: ["ds-1", "ds-2"],
    tagged_chat_user_ids: ["U1"],
    selected_template_data_ids: ["tpl-9"],
    deployed_at: at(10),
    next_run_at: at(3600),
    created_at: at(1),
    updated_at: at(20)
  })

const blocks = Schema.decodeUnknownSync(Schema.Array(Report.Block))([
  {
    type: "hero",
    heading: "Revenue",
    image_url: "https://x/h.png",
    image_alt: "hero",
    variant: "rounded",
    height: 120
  },
  { type: "card", blocks: [{ type: "list", items: ["EU", "US"] }, { type: "divider" }] }
])

const report = (
  of: Playbook.PlaybookRecord,
  chatId: ChatId,
  options: Partial<Report.ReportRecord> = {}
): Report.ReportRecord =>
  new Report.ReportRecord({
    id: ReportId.make(Fixtures.uuid()),
    playbook_id: of.id,
    organization_id: of.organization_id,
    chat_id: chatId,
    subject: "Weekly revenue",
    summary: "Up 4%",
    blocks,
    html_preview: "<h1>Revenue</h1>",
    created_at: base,
    ...options
  })

/** A chat for reports to point at. */
const chatOf = (organizationId: OrganizationId, creatorId: MemberId) =>
  Effect.gen(function*() {
    const repo = yield* ChatRepo
    const record = Chat.make({
      id: ChatId.make(Fixtures.uuid()),
      organizationId,
      creatorId,
      model: "offline",
      source: "playbook",
      question: "Weekly revenue",
      at: base
    })
    yield* Effect.orDie(repo.create(record))
    return record.id
  })

const createAll = (playbooks: ReadonlyArray<Playbook.PlaybookRecord>) =>
  Effect.flatMap(PlaybookRepo, (repo) => Effect.forEach(playbooks, repo.create, { discard: true }))

const listOptions = (options: Partial<PlaybookRepo.ListOptions> = {}): PlaybookRepo.ListOptions => ({
  limit: 100,
  offset: 0,
  sortBy: "updated_at",
  sortDirection: "desc",
  ...options
})

const listIds = (organizationId: OrganizationId, options: Partial<PlaybookRepo.ListOptions> = {}) =>
  Effect.flatMap(
    PlaybookRepo,
    (repo) => Effect.map(repo.list(organizationId, listOptions(options)), (result) => result.rows.map((row) => row.id))
  )

/** The order the port promises: the sort key (name folded to lower case), then id. */
const expectedOrder = (
  playbooks: ReadonlyArray<Playbook.PlaybookRecord>,
  sortBy: Playbook.PlaybookSortField,
  direction: "asc" | "desc"
) => {
  const keyOf = (p: Playbook.PlaybookRecord): string | number =>
    sortBy === "name"
      ? p.name.toLowerCase()
      : sortBy === "created_at"
      ? p.created_at.epochMillis
      : p.updated_at.epochMillis
  const sign = direction === "asc" ? 1 : -1
  return [...playbooks].sort((a, b) => {
    const ka = keyOf(a)
    const kb = keyOf(b)
    if (ka !== kb) return (ka < kb ? -1 : 1) * sign
    return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * sign
  }).map((p) => p.id)
}

/**
 * Registers the `PlaybookRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const playbookRepoContract = (name: string, layer: Layer.Layer<Requirements, unknown>): void => {
  describe(name, () => {
    it.effect("create then get round-trips every field", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const records = [full(org.id, member.id), playbook(org.id, member.id)]
        yield* createAll(records)
        for (const record of records) {
          expect(Option.map(yield* repo.get(org.id, record.id), encode)).toEqual(Option.some(encode(record)))
          expect(Option.map(yield* repo.getForUpdate(org.id, record.id), encode)).toEqual(Option.some(encode(record)))
        }
      }).pipe(Effect.provide(layer)))

    it.effect("get and getForUpdate see only the playbook's own organization", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* Fixtures.organization()
        const record = playbook(org.id, member.id)
        yield* repo.create(record)
        expect(Option.isNone(yield* repo.get(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.getForUpdate(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.get(org.id, PlaybookId.make(Fixtures.uuid())))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("detachConnector removes a connector from the organization's playbooks only", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* Fixtures.organization()
        const stranger = yield* Fixtures.member(other.id)
        const uses = playbook(org.id, member.id, { connector_ids: [ConnectorId.make(7), ConnectorId.make(8)] })
        const without = playbook(org.id, member.id, { connector_ids: [ConnectorId.make(8)] })
        const foreign = playbook(other.id, stranger.id, { connector_ids: [ConnectorId.make(7)] })
        yield* createAll([uses, without, foreign])
        const when = DateTime.unsafeMake("2026-09-01T00:00:00.000Z")
        yield* repo.detachConnector(org.id, ConnectorId.make(7), when)
        const after = Option.getOrThrow(yield* repo.get(org.id, uses.id))
        expect(after.connector_ids).toEqual([8])
        expect(after.updated_at).toEqual(when)
        expect(Option.map(yield* repo.get(org.id, without.id), encode)).toEqual(Option.some(encode(without)))
        expect(Option.getOrThrow(yield* repo.get(other.id, foreign.id)).connector_ids).toEqual([7])
      }).pipe(Effect.provide(layer)))

    it.effect("create rejects a duplicate id with Conflict and keeps the original", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const original = playbook(org.id, member.id, { name: "original" })
        yield* repo.create(original)
        expect((yield* Effect.flip(repo.create(new Playbook.PlaybookRecord({ ...original, name: "dup" }))))._tag)
          .toBe("Conflict")
        expect(Option.map(yield* repo.get(org.id, original.id), (p) => p.name)).toEqual(Option.some("original"))
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces the stored playbook, clearing optional fields that are gone", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const record = full(org.id, member.id)
        yield* repo.create(record)
        const { chat_channel_id: _c, cron_string: _s, dashboard: _d, next_run_at: _n, ...rest } = record
        const cleared = new Playbook.PlaybookRecord({
          ...rest,
          name: "Renamed",
          email_addresses: [],
          updated_at: at(99)
        })
        yield* repo.update(cleared)
        const stored = yield* repo.get(org.id, record.id)
        expect(Option.map(stored, encode)).toEqual(Option.some(encode(cleared)))
        expect(Option.map(stored, (p) => [p.cron_string, p.chat_channel_id, p.dashboard, p.next_run_at])).toEqual(
          Option.some([undefined, undefined, undefined, undefined])
        )
      }).pipe(Effect.provide(layer)))

    it.effect("update of a playbook that is absent or in another organization is NotFound and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = playbook(org.id, member.id)
        yield* repo.create(record)
        const hijack = new Playbook.PlaybookRecord({ ...record, organization_id: other.org.id, name: "mine" })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.get(org.id, record.id), encode)).toEqual(Option.some(encode(record)))
        expect((yield* Effect.flip(repo.update(playbook(org.id, member.id))))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("delete removes the playbook and its reports, in its own organization only", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const chatId = yield* chatOf(org.id, member.id)
        const doomed = playbook(org.id, member.id)
        const kept = playbook(org.id, member.id)
        yield* createAll([doomed, kept])
        yield* repo.addReport(report(doomed, chatId))
        const keptReport = report(kept, chatId)
        yield* repo.addReport(keptReport)
        expect((yield* Effect.flip(repo.delete(other.org.id, doomed.id)))._tag).toBe("NotFound")
        expect(Option.isSome(yield* repo.get(org.id, doomed.id))).toBe(true)
        yield* repo.delete(org.id, doomed.id)
        expect(Option.isNone(yield* repo.get(org.id, doomed.id))).toBe(true)
        expect(yield* repo.listReports(org.id, doomed.id, { limit: 10, offset: 0 })).toEqual({
          reports: [],
          totalCount: 0
        })
        expect((yield* repo.listReports(org.id, kept.id, { limit: 10, offset: 0 })).reports.map((r) => r.id)).toEqual([
          keptReport.id
        ])
        expect((yield* Effect.flip(repo.delete(org.id, doomed.id)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("list shows only the organization's playbooks and counts every match", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const mine = [full(org.id, member.id), playbook(org.id, member.id)]
        yield* createAll([...mine, playbook(other.org.id, other.member.id)])
        const result = yield* repo.list(org.id, listOptions())
        expect(result.totalCount).toBe(2)
        const byId = (a: { readonly id: string }, b: { readonly id: string }) => a.id < b.id ? -1 : 1
        expect(result.rows.map(encode).sort(byId)).toEqual(mine.map(encode).sort(byId))
      }).pipe(Effect.provide(layer)))

    it.effect("list filters by audience, and a playbook keeps its audience through updates", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const east = playbook(org.id, member.id, { audience: "a".repeat(64) })
        const none = playbook(org.id, member.id)
        yield* createAll([east, none])
        expect(yield* listIds(org.id, { audience: "a".repeat(64) })).toEqual([east.id])
        expect(yield* listIds(org.id, { audience: "" })).toEqual([none.id])
        expect((yield* repo.list(org.id, listOptions({ audience: "b".repeat(64) }))).totalCount).toBe(0)
        yield* repo.update(new Playbook.PlaybookRecord({ ...east, name: "renamed", updated_at: at(5) }))
        const stored = Option.getOrThrow(yield* repo.get(org.id, east.id))
        expect([stored.name, stored.audience]).toEqual(["renamed", "a".repeat(64)])
        expect(Option.getOrThrow(yield* repo.get(org.id, none.id)).audience).toBeUndefined()
      }).pipe(Effect.provide(layer)))

    it.effect("list sorts by name, created_at and updated_at in both directions, ties broken by id", () =>
      Effect.gen(function*() {
        const { member, org } = yield* setup
        const playbooks = [
          playbook(org.id, member.id, { name: "bravo", created_at: at(3), updated_at: at(10) }),
          playbook(org.id, member.id, { name: "Alpha", created_at: at(1), updated_at: at(30) }),
          playbook(org.id, member.id, { name: "charlie", created_at: at(2), updated_at: at(20) }),
          playbook(org.id, member.id, { name: "alpha", created_at: at(2), updated_at: at(20) }),
          playbook(org.id, member.id, { name: "", created_at: at(2), updated_at: at(5) })
        ]
        yield* createAll(playbooks)
        for (const sortBy of Playbook.PlaybookSortField.literals) {
          for (const sortDirection of ["asc", "desc"] as const) {
            expect(yield* listIds(org.id, { sortBy, sortDirection })).toEqual(
              expectedOrder(playbooks, sortBy, sortDirection)
            )
          }
        }
        const byName = yield* listIds(org.id, { sortBy: "name", sortDirection: "asc" })
        expect(byName[0]).toBe(playbooks[4]!.id)
        expect(byName.slice(3)).toEqual([playbooks[0]!.id, playbooks[2]!.id])
      }).pipe(Effect.provide(layer)))

    it.effect("list pages with offset and limit; total_count is the count of every match", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const playbooks = [1, 2, 3, 4, 5].map((s) => playbook(org.id, member.id, { updated_at: at(s) }))
        yield* createAll(playbooks)
        const ids = []
        for (const offset of [0, 2, 4]) {
          const page = yield* repo.list(org.id, listOptions({ limit: 2, offset }))
          expect(page.totalCount).toBe(5)
          ids.push(...page.rows.map((row) => row.id))
        }
        expect(ids).toEqual(expectedOrder(playbooks, "updated_at", "desc"))
        expect((yield* repo.list(org.id, listOptions({ offset: 7 }))).rows).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("search matches the name or the prompt, case-insensitively and literally; status filters", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const byName = playbook(org.id, member.id, { name: "Churn Watch", status: "deployed" })
        const byPrompt = playbook(org.id, member.id, { name: "Weekly", prompt: "Report the CHURN rate" })
        const percent = playbook(org.id, member.id, { name: "50% target" })
        const digits = playbook(org.id, member.id, { name: "500 target", status: "deployed" })
        yield* createAll([byName, byPrompt, percent, digits])
        const search = (options: Partial<PlaybookRepo.ListOptions>) =>
          Effect.map(listIds(org.id, options), (ids) => [...ids].sort())
        expect(yield* search({ searchTerm: "churn" })).toEqual([byName.id, byPrompt.id].sort())
        expect(yield* search({ searchTerm: "50%" })).toEqual([percent.id])
        expect(yield* search({ searchTerm: "_" })).toEqual([])
        expect(yield* search({ status: "deployed" })).toEqual([byName.id, digits.id].sort())
        expect(yield* search({ status: "draft" })).toEqual([byPrompt.id, percent.id].sort())
        expect(yield* search({ status: "deployed", searchTerm: "CHURN" })).toEqual([byName.id])
        const counted = yield* repo.list(org.id, listOptions({ searchTerm: "target", limit: 1 }))
        expect(counted.totalCount).toBe(2)
        expect(counted.rows).toHaveLength(1)
      }).pipe(Effect.provide(layer)))

    it.effect("reports round-trip every field and list newest first with paging and a total", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const chatId = yield* chatOf(org.id, member.id)
        const record = playbook(org.id, member.id)
        const sibling = playbook(org.id, member.id)
        yield* createAll([record, sibling])
        const reports = [
          report(record, chatId, { created_at: at(1) }),
          report(record, chatId, { created_at: at(3), subject: "Ünïcode — subject", blocks: [] }),
          report(record, chatId, { created_at: at(2) }),
          report(record, chatId, { created_at: at(2) })
        ]
        yield* Effect.forEach([...reports, report(sibling, chatId)], repo.addReport, { discard: true })
        const tied = [reports[2]!, reports[3]!].sort((a, b) => a.id < b.id ? 1 : -1)
        const expected = [reports[1]!, ...tied, reports[0]!]
        const first = yield* repo.listReports(org.id, record.id, { limit: 3, offset: 0 })
        const rest = yield* repo.listReports(org.id, record.id, { limit: 3, offset: 3 })
        expect(first.totalCount).toBe(4)
        expect(rest.totalCount).toBe(4)
        expect([...first.reports, ...rest.reports].map(encodeReport)).toEqual(expected.map(encodeReport))
        // The playbook and the same pages in one read.
        const withFirst = Option.getOrThrow(yield* repo.getWithReports(org.id, record.id, { limit: 3, offset: 0 }))
        const withRest = Option.getOrThrow(yield* repo.getWithReports(org.id, record.id, { limit: 3, offset: 3 }))
        expect(encode(withFirst.playbook)).toEqual(encode(record))
        expect(encode(withRest.playbook)).toEqual(encode(record))
        expect([withFirst.page.totalCount, withRest.page.totalCount]).toEqual([4, 4])
        expect([...withFirst.page.reports, ...withRest.page.reports].map(encodeReport))
          .toEqual(expected.map(encodeReport))
        const beyond = Option.getOrThrow(yield* repo.getWithReports(org.id, record.id, { limit: 3, offset: 9 }))
        expect(beyond.page).toEqual({ reports: [], totalCount: 4 })
        const none = Option.getOrThrow(yield* repo.getWithReports(org.id, sibling.id, { limit: 3, offset: 1 }))
        expect(encode(none.playbook)).toEqual(encode(sibling))
        expect(none.page).toEqual({ reports: [], totalCount: 1 })
      }).pipe(Effect.provide(layer)))

    it.effect("reports belong to a playbook of their organization and have fresh ids", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const chatId = yield* chatOf(org.id, member.id)
        const record = playbook(org.id, member.id)
        yield* repo.create(record)
        const stored = report(record, chatId)
        yield* repo.addReport(stored)
        expect(yield* repo.listReports(other.org.id, record.id, { limit: 10, offset: 0 })).toEqual({
          reports: [],
          totalCount: 0
        })
        expect(yield* repo.getWithReports(other.org.id, record.id, { limit: 10, offset: 0 })).toEqual(Option.none())
        const unknown = playbook(org.id, member.id)
        expect(yield* repo.getWithReports(org.id, unknown.id, { limit: 10, offset: 0 })).toEqual(Option.none())
        const foreign = new Report.ReportRecord({ ...report(record, chatId), organization_id: other.org.id })
        expect((yield* Effect.flip(repo.addReport(foreign)))._tag).toBe("NotFound")
        const orphan = report(playbook(org.id, member.id), chatId)
        expect((yield* Effect.flip(repo.addReport(orphan)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.addReport(new Report.ReportRecord({ ...stored, subject: "again" }))))._tag)
          .toBe("Conflict")
        expect((yield* repo.listReports(org.id, record.id, { limit: 10, offset: 0 })).reports.map(encodeReport))
          .toEqual([
            encodeReport(stored)
          ])
      }).pipe(Effect.provide(layer)))

    it.effect("listDue returns deployed playbooks whose next run is due, across organizations, earliest first", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const a = yield* setup
        const b = yield* setup
        // A random instant far in the past keeps this test's rows apart from other tests' rows.
        const now = DateTime.unsafeMake(Date.UTC(1990, 0, 1) + Math.floor(Math.random() * 1e11))
        const before = (seconds: number) => DateTime.subtract(now, { seconds })
        const deployed = (org: OrganizationId, owner: MemberId, nextRunAt: DateTime.Utc) =>
          playbook(org, owner, {
            status: "deployed",
            cron_string: "0 9 * * *",
            deployed_at: base,
            next_run_at: nextRunAt
          })
        const dueInB = deployed(b.org.id, b.member.id, before(30))
        const dueInA = deployed(a.org.id, a.member.id, before(60))
        const dueNow = deployed(a.org.id, a.member.id, now)
        const notYet = deployed(a.org.id, a.member.id, DateTime.add(now, { millis: 1 }))
        const draftWithTime = playbook(a.org.id, a.member.id, { cron_string: "0 9 * * *", next_run_at: before(90) })
        const unscheduled = playbook(b.org.id, b.member.id, { status: "deployed", deployed_at: base })
        yield* createAll([dueInB, dueInA, dueNow, notYet, draftWithTime, unscheduled])
        const ours = new Set([dueInB, dueInA, dueNow, notYet, draftWithTime, unscheduled].map((p) => p.id as string))
        const due = yield* repo.listDue(now, 1000)
        expect(due.filter((p) => ours.has(p.id)).map(encode)).toEqual([dueInA, dueInB, dueNow].map(encode))
        expect(due.every((p) => p.status === "deployed" && p.next_run_at!.epochMillis <= now.epochMillis)).toBe(true)
        const millis = due.map((p) => p.next_run_at!.epochMillis)
        expect([...millis].sort((x, y) => x - y)).toEqual(millis)
        expect((yield* repo.listDue(now, 2)).length).toBeLessThanOrEqual(2)
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no playbook, update or report behind", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const chatId = yield* chatOf(org.id, member.id)
        const existing = playbook(org.id, member.id)
        yield* repo.create(existing)
        const created = playbook(org.id, member.id)
        const write = Effect.all([
          repo.create(created),
          repo.update(Playbook.deploy(existing, at(5))),
          repo.addReport(report(existing, chatId))
        ], { discard: true })
        const exit = yield* Effect.exit(tx.withTransaction(Effect.zipRight(write, Effect.fail("boom" as const))))
        expect(exit._tag).toBe("Failure")
        expect(Option.isNone(yield* repo.get(org.id, created.id))).toBe(true)
        expect(Option.map(yield* repo.get(org.id, existing.id), encode)).toEqual(Option.some(encode(existing)))
        expect((yield* repo.listReports(org.id, existing.id, { limit: 10, offset: 0 })).totalCount).toBe(0)

        yield* tx.withTransaction(write)
        expect(Option.isSome(yield* repo.get(org.id, created.id))).toBe(true)
        expect(Option.map(yield* repo.get(org.id, existing.id), (p) => p.status)).toEqual(Option.some("deployed"))
        expect((yield* repo.listReports(org.id, existing.id, { limit: 10, offset: 0 })).totalCount).toBe(1)
      }).pipe(Effect.provide(layer)))
  })
}

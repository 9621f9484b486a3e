/**
 * What the PlaybookRepo contract cannot show, on real databases:
 * - a scheduled time raced by several scheduler processes fires once (`getForUpdate` in a transaction);
 * - a report's chat must be a chat of the report's organization;
 * - `listDue`, the listing's sorts and filters, search and report pages are served by indexes
 *   (EXPLAIN of the statements the repository runs, on thousands of playbooks).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Chat from "@sightline/core/Chat"
import { ChatRepo } from "@sightline/core/ChatRepo"
import { ChatId, type MemberId, type OrganizationId, PlaybookId, ReportId } from "@sightline/core/Ids"
import * as Playbook from "@sightline/core/Playbook"
import { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import * as Report from "@sightline/core/Report"
import { Fixtures } from "@sightline/core/testing"
import { Transaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { forEachDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const base = DateTime.unsafeMake("2026-02-01T08:00:00.000Z")

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

const newPlaybook = (
  organizationId: OrganizationId,
  ownerId: MemberId,
  options: Partial<Playbook.PlaybookRecord> = {}
) =>
  new Playbook.PlaybookRecord({
    ...Playbook.make({ id: PlaybookId.make(Fixtures.uuid()), organizationId, ownerId, at: base }),
    name: "Weekly revenue",
    prompt: "Summarize revenue",
    ...options
  })

const newChat = (organizationId: OrganizationId, creatorId: MemberId) =>
  Effect.gen(function*() {
    const chat = Chat.make({
      id: ChatId.make(Fixtures.uuid()),
      organizationId,
      creatorId,
      model: "offline",
      source: "playbook",
      question: "Weekly revenue",
      at: base
    })
    yield* Effect.orDie((yield* ChatRepo).create(chat))
    return chat
  })

const newReport = (playbook: Playbook.PlaybookRecord, chatId: ChatId) =>
  new Report.ReportRecord({
    id: ReportId.make(Fixtures.uuid()),
    playbook_id: playbook.id,
    organization_id: playbook.organization_id,
    chat_id: chatId,
    subject: "Weekly revenue",
    summary: "Up",
    blocks: [],
    html_preview: "<p>Up</p>",
    created_at: base
  })

forEachDatabase((database) =>
  describe(`PlaybookRepoSql (${database.name})`, () => {
    it.live("a due time raced by several schedulers fires exactly once", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const chat = yield* newChat(org.id, member.id)
        const now = DateTime.unsafeMake(Date.UTC(1995, 0, 1) + Math.floor(Math.random() * 1e10))
        const playbook = Playbook.deploy(newPlaybook(org.id, member.id, { cron_string: "0 9 * * *" }), base)
        yield* repo.create(
          new Playbook.PlaybookRecord({ ...playbook, next_run_at: DateTime.subtract(now, { minutes: 1 }) })
        )
        // What each scheduler process does with a playbook `listDue` gave it.
        const fire = tx.withTransaction(Effect.gen(function*() {
          const current = yield* repo.getForUpdate(org.id, playbook.id)
          if (Option.isNone(current) || !Playbook.isDue(current.value, now)) return false
          yield* Effect.sleep("20 millis")
          yield* repo.update(Playbook.advanceSchedule(current.value, now))
          yield* Effect.orDie(repo.addReport(newReport(current.value, chat.id)))
          return true
        }))
        const fired = yield* Effect.all(Arr.makeBy(8, () => fire), { concurrency: "unbounded" })
        expect(fired.filter(Boolean)).toHaveLength(1)
        expect((yield* repo.listReports(org.id, playbook.id, { limit: 10, offset: 0 })).totalCount).toBe(1)
        const stored = Option.getOrThrow(yield* repo.get(org.id, playbook.id))
        expect(DateTime.greaterThan(stored.next_run_at!, now)).toBe(true)
        expect((yield* repo.listDue(now, 1000)).map((p) => p.id)).not.toContain(playbook.id)
      }).pipe(Effect.provide(database.shared)), 30_000)

    it.effect("a report's chat must be a chat of the report's organization", () =>
      Effect.gen(function*() {
        const repo = yield* PlaybookRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const foreignChat = yield* newChat(other.org.id, other.member.id)
        const playbook = newPlaybook(org.id, member.id)
        yield* repo.create(playbook)
        const error = yield* Effect.flip(repo.addReport(newReport(playbook, foreignChat.id)))
        expect(error._tag).toBe("NotFound")
        expect(error.message).toContain(foreignChat.id)
        expect((yield* repo.listReports(org.id, playbook.id, { limit: 10, offset: 0 })).totalCount).toBe(0)
      }).pipe(Effect.provide(database.shared)))

    describe("indexes (EXPLAIN of the repository's own statements, thousands of playbooks)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      /** 4 organizations with 1 000 playbooks each (one in ten deployed and scheduled), and reports. */
      let populated: { readonly org: { readonly id: OrganizationId }; readonly playbookId: PlaybookId } | undefined
      const populate = Effect.suspend(() =>
        populated !== undefined ? Effect.succeed(populated) : Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owners = yield* Effect.forEach(Arr.range(1, 4), () => setup)
          const table = (name: string) => sql(`${prefix}${name}`)
          yield* sql`INSERT INTO ${table("playbooks")} (id, organization_id, owner_id, name, prompt, status,
              connector_ids, cron_string, email_addresses, dataset_ids, tagged_chat_user_ids,
              selected_template_data_ids, deployed_at, next_run_at, created_at, updated_at)
            SELECT gen_random_uuid(), m.organization_id, m.id, 'Playbook ' || md5(m.id::text || g),
              'Prompt ' || md5(g || m.id::text), CASE WHEN g % 10 = 0 THEN 'deployed' ELSE 'draft' END,
              '{}', CASE WHEN g % 10 = 0 THEN '0 9 * * *' END, '{}', '{}', '{}', '{}',
              CASE WHEN g % 10 = 0 THEN timestamptz '2025-01-01T00:00:00Z' END,
              CASE WHEN g % 10 = 0 THEN timestamptz '2030-01-01T00:00:00Z' + g * interval '1 hour' END,
              timestamptz '2025-01-01T00:00:00Z' + g * interval '1 minute',
              timestamptz '2025-06-01T00:00:00Z' + g * interval '1 minute'
            FROM ${table("members")} m, generate_series(1, 1000) g
            WHERE m.organization_id IN ${sql.in(owners.map(({ org }) => org.id))}`
          const { member, org } = owners[2]!
          const chat = yield* newChat(org.id, member.id)
          const playbook = newPlaybook(org.id, member.id)
          yield* (yield* PlaybookRepo).create(playbook)
          yield* sql`INSERT INTO ${table("playbook_reports")} (id, organization_id, playbook_id, chat_id, subject,
              summary, blocks, html_preview, created_at)
            SELECT gen_random_uuid(), p.organization_id, p.id, ${chat.id}, 's', 's', '[]', '',
              timestamptz '2025-01-01T00:00:00Z' + g * interval '1 day'
            FROM ${table("playbooks")} p, generate_series(1, 3) g WHERE p.organization_id = ${org.id}`
          // VACUUM also moves the new rows out of the GIN indexes' pending lists, as autovacuum would.
          for (const name of ["playbooks", "playbook_reports"]) yield* sql`VACUUM ANALYZE ${table(name)}`
          populated = { org, playbookId: playbook.id }
          return populated
        })
      )

      const uses = (plan: string, index: string) =>
        new RegExp(`(Index (Only )?Scan( Backward)?|Bitmap Index Scan) (using |on )${prefix}${index}\\b`).test(plan)

      it.live("listDue is a range scan of the partial due index, in order", () =>
        Effect.gen(function*() {
          const repo = yield* PlaybookRepo
          yield* populate
          const { plans, result } = yield* capturePlans(repo.listDue(DateTime.unsafeMake("2030-01-02T00:00:00Z"), 50))
          expect(result.length).toBeGreaterThan(0)
          expect(uses(plans[0]!.plan, "playbooks_due_idx")).toBe(true)
          expect(plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
        }).pipe(Effect.provide(store)), 120_000)

      it.live("every sort of the listing, alone or with the status filter, reads an index in order", () =>
        Effect.gen(function*() {
          const repo = yield* PlaybookRepo
          const { org } = yield* populate
          for (
            const [sortBy, index] of [["name", "playbooks_name_idx"], ["created_at", "playbooks_created_idx"], [
              "updated_at",
              "playbooks_updated_idx"
            ]] as const
          ) {
            for (const sortDirection of ["asc", "desc"] as const) {
              const { plans, result } = yield* capturePlans(
                repo.list(org.id, { limit: 20, offset: 40, sortBy, sortDirection })
              )
              expect(result.rows).toHaveLength(20)
              expect(result.totalCount).toBe(1001)
              const page = plans.find((p) =>
                /ORDER BY/.test(p.sql)
              )!
              expect(uses(page.plan, index)).toBe(true)
              expect(page.plan).not.toMatch(/Seq Scan|Sort/)
            }
          }
          const deployed = yield* capturePlans(
            repo.list(org.id, { limit: 20, offset: 0, sortBy: "updated_at", sortDirection: "desc", status: "deployed" })
          )
          expect(deployed.result.totalCount).toBe(100)
          for (const { plan } of deployed.plans) {
            expect(plan).toMatch(new RegExp(`Index.* (using|on) ${prefix}playbooks_`))
            expect(plan).not.toMatch(/Seq Scan/)
          }
        }).pipe(Effect.provide(store)), 120_000)

      it.live("search uses the trigram indexes where pg_trgm exists, else the organization's index", () =>
        Effect.gen(function*() {
          const repo = yield* PlaybookRepo
          const sql = yield* SqlClient.SqlClient
          const { org, playbookId } = yield* populate
          const found = yield* capturePlans(
            repo.list(org.id, { limit: 20, offset: 0, sortBy: "name", sortDirection: "asc", searchTerm: "REVENUE" })
          )
          expect(found.result.rows.map((p) =>
            p.id
          )).toEqual([playbookId])
          const trigram = (yield* sql`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`).length > 0
          for (const { plan } of found.plans) {
            if (trigram) {
              expect(uses(plan, "playbooks_name_trgm_idx")).toBe(true)
              expect(uses(plan, "playbooks_prompt_trgm_idx")).toBe(true)
            } else {
              // PGlite ships pg_trgm only in a contrib bundle its client does not load.
              expect(database.name).toBe("pglite")
              expect(plan).toMatch(new RegExp(`Index.* (using|on) ${prefix}playbooks_`))
              expect(plan).not.toMatch(/Seq Scan/)
            }
          }
        }).pipe(Effect.provide(store)), 120_000)

      it.live("report pages read the report index in order", () =>
        Effect.gen(function*() {
          const repo = yield* PlaybookRepo
          const { org } = yield* populate
          const [first] = (yield* repo.list(org.id, { limit: 1, offset: 0, sortBy: "name", sortDirection: "asc" })).rows
          const { plans, result } = yield* capturePlans(repo.listReports(org.id, first!.id, { limit: 2, offset: 1 }))
          expect(result.totalCount).toBe(3)
          expect(result.reports).toHaveLength(2)
          for (const { plan } of plans) {
            expect(uses(plan, "playbook_reports_list_idx")).toBe(true)
            expect(plan).not.toMatch(/Seq Scan|Sort/)
          }
          // With the playbook, in one statement: its key, then the same index for the page and the total.
          const joined = yield* capturePlans(repo.getWithReports(org.id, first!.id, { limit: 2, offset: 1 }))
          const found = Option.getOrThrow(joined.result)
          expect(found.playbook.id).toBe(first!.id)
          expect(found.page.reports.map((r) =>
            r.id
          )).toEqual(result.reports.map((r) =>
            r.id
          ))
          expect(found.page.totalCount).toBe(3)
          expect(joined.plans).toHaveLength(1)
          const plan = joined.plans[0]!.plan
          expect(uses(plan, "playbooks_pkey") || uses(plan, "playbooks_organization_id_key"), plan).toBe(true)
          expect(uses(plan, "playbook_reports_list_idx")).toBe(true)
          expect(plan).not.toMatch(/Seq Scan|Sort/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)

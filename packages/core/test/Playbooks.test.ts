import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type * as Chats from "../src/Chats.js"
import * as Connector from "../src/Connector.js"
import { ConnectorRepo } from "../src/ConnectorRepo.js"
import {
  AssetId,
  ChatId,
  type ConnectorId,
  type MemberId,
  type OrganizationId,
  PlaybookId,
  ReportId,
  RoleId
} from "../src/Ids.js"
import type { Member } from "../src/Member.js"
import type * as Permission from "../src/Permission.js"
import * as Playbook from "../src/Playbook.js"
import { PlaybookRepo } from "../src/PlaybookRepo.js"
import * as Playbooks from "../src/Playbooks.js"
import * as Policy from "../src/Policy.js"
import * as Report from "../src/Report.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Playbooks.layer.pipe(Layer.provideMerge(Memory.layer))

// --- fixtures ------------------------------------------------------------------------------------

const role = (name: string, permissions: ReadonlyArray<Permission.Permission>, isSystem = false): Policy.RoleInfo => ({
  id: RoleId.make(Fixtures.uuid()),
  name,
  permissions,
  isSystem,
  model: { allowModelChoice: true }
})

/** The `member` system role: playbook read and write, connector read. */
const memberRole = role("member", [], true)
const readerRole = role("reader", ["playbook:read", "connector:read"])
const noPlaybooksRole = role("none", ["chat:read"])

const principalOf = (member: Member, roles: ReadonlyArray<Policy.RoleInfo> = [memberRole]): Policy.Principal => ({
  organizationId: member.organization_id,
  memberId: member.id,
  isServiceAccount: false,
  roles,
  auth: Policy.Session()
})

/** Two members of one organization and a member of another. */
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const other = yield* Fixtures.organization("Other Org")
  const alice = yield* Fixtures.member(org.id)
  const bob = yield* Fixtures.member(org.id)
  const mallory = yield* Fixtures.member(other.id)
  return { org, other, alice: principalOf(alice), bob: principalOf(bob), mallory: principalOf(mallory) }
})

const decodeList = Schema.decodeUnknownSync(Playbook.ListPlaybooksQuery)
const decodeGet = Schema.decodeUnknownSync(Playbook.GetPlaybookQuery)
const decodeUpdate = Schema.decodeUnknownSync(Playbook.UpdatePlaybookRequest)
const noPaging = decodeGet({})
const sign: Chats.SignAssetUrl = (id) => Effect.succeed(`https://sightline.test/v2/assets/${id}?signature=x`)

const connector = (organizationId: OrganizationId, ownerId: MemberId, isPublic: boolean) =>
  Effect.gen(function*() {
    const repo = yield* ConnectorRepo
    const created = yield* repo.create(
      Connector.make({
        organizationId,
        ownerId,
        config: { connector_type: "DEMO", name: "demo", demo: { dataset: "retail" } },
        at: yield* DateTime.now
      }),
      Connector.initialAccess(ownerId, { is_public: isPublic, grants: [] })
    )
    return created.id
  })

const addReport = (organizationId: OrganizationId, playbookId: PlaybookId, subject: string) =>
  Effect.gen(function*() {
    const report = new Report.ReportRecord({
      id: ReportId.make(Fixtures.uuid()),
      organization_id: organizationId,
      playbook_id: playbookId,
      subject,
      summary: `summary of ${subject}`,
      blocks: [{ type: "text", content: subject }],
      html_preview: `<p>${subject}</p>`,
      chat_id: ChatId.make(Fixtures.uuid()),
      created_at: yield* DateTime.now
    })
    yield* Effect.orDie((yield* PlaybookRepo).addReport(report))
    return report
  })

// The error of an effect expected to fail. An unexpected success dies with the value as JSON, so the
// report stays readable (printing the raw value, full of Effect data types, can stall the reporter).
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.matchEffect(effect, {
    onFailure: Effect.succeed,
    onSuccess: (value) => Effect.dieMessage(`expected a failure, got ${JSON.stringify(value)}`)
  })

// --- create ----------------------------------------------------------------------------------------

describe("Playbooks.create", () => {
  it.effect("creates an empty draft and answers the Playbook shape with unset fields left out", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      yield* TestClock.adjust("1 hour")
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const now = yield* DateTime.now
      expect(created).toBeInstanceOf(Playbook.Playbook)
      expect(created).toMatchObject({ name: "", prompt: "", status: "draft", connector_ids: [] })
      expect(created.created_at).toEqual(now)
      expect(created.updated_at).toEqual(now)
      expect(Object.keys(created)).not.toContain("cron_string")
      expect(Object.keys(created)).not.toContain("email_addresses")
      expect(Object.keys(created)).not.toContain("chat_channel_id")
      const stored = yield* (yield* PlaybookRepo).get(alice.organizationId, created.id)
      expect(Option.map(stored, (p) => p.owner_id)).toEqual(Option.some(alice.memberId))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs playbook:write (403)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const error = yield* failure((yield* Playbooks.Playbooks).create({ ...alice, roles: [readerRole] }))
      expect(error._tag).toBe("PermissionDenied")
      expect(error.message).toContain("playbook:write")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses a soft-deleted member (401)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const error = yield* failure((yield* Playbooks.Playbooks).create({ ...alice, deleted: true }))
      expect(error._tag).toBe("Unauthenticated")
    }).pipe(Effect.provide(TestLayer)))
})

// --- list ------------------------------------------------------------------------------------------

describe("Playbooks.list", () => {
  it.effect("lists every playbook of the caller's organization (org-wide visibility), never another's", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const a1 = yield* service.create(alice)
      const a2 = yield* service.create(alice)
      const b1 = yield* service.create(bob)
      const foreign = yield* service.create(mallory)
      const listed = yield* service.list(bob, decodeList({}))
      expect(listed.total_count).toBe(3)
      expect(listed.playbooks.map((p) => p.id).sort()).toEqual([a1.id, a2.id, b1.id].sort())
      expect(listed.playbooks.map((p) => p.id)).not.toContain(foreign.id)
      expect(listed.playbooks.every((p) => p instanceof Playbook.Playbook)).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("filters by status and search term, sorts and pages with the total count", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const weekly = yield* service.create(alice)
      yield* service.update(alice, weekly.id, decodeUpdate({ name: "Weekly Revenue" }))
      yield* TestClock.adjust("1 minute")
      const daily = yield* service.create(alice)
      yield* service.update(alice, daily.id, decodeUpdate({ name: "Daily churn", prompt: "revenue by region" }))
      yield* service.deploy(alice, daily.id)
      yield* TestClock.adjust("1 minute")
      const other = yield* service.create(alice)
      yield* service.update(alice, other.id, decodeUpdate({ name: "Inventory" }))

      const deployed = yield* service.list(alice, decodeList({ status_filter: "deployed" }))
      expect(deployed.playbooks.map((p) => p.id)).toEqual([daily.id])
      const drafts = yield* service.list(alice, decodeList({ status_filter: "draft" }))
      expect(drafts.total_count).toBe(2)

      // Case-insensitive, in the name or the prompt.
      const search = yield* service.list(
        alice,
        decodeList({ search_term: "REVENUE", sort_by: "name", sort_direction: "asc" })
      )
      expect(search.playbooks.map((p) => p.name)).toEqual(["Daily churn", "Weekly Revenue"])

      const page = yield* service.list(alice, decodeList({ limit: "1", offset: "1", sort_by: "created_at" }))
      expect(page.total_count).toBe(3)
      expect(page.playbooks.map((p) => p.id)).toEqual([daily.id])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs playbook:read (403)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const error = yield* failure(
        (yield* Playbooks.Playbooks).list({ ...alice, roles: [noPlaybooksRole] }, decodeList({}))
      )
      expect(error._tag).toBe("PermissionDenied")
    }).pipe(Effect.provide(TestLayer)))
})

// --- get -------------------------------------------------------------------------------------------

describe("Playbooks.get", () => {
  it.effect("returns the playbook with a page of its reports, newest first, and their total", () =>
    Effect.gen(function*() {
      const { alice, bob, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const first = yield* addReport(org.id, created.id, "first")
      yield* TestClock.adjust("1 hour")
      const second = yield* addReport(org.id, created.id, "second")
      yield* TestClock.adjust("1 hour")
      const third = yield* addReport(org.id, created.id, "third")

      // Another member of the organization reads it too.
      const all = yield* service.get(bob, created.id, noPaging, sign)
      expect(all.playbook).toEqual(created)
      expect(all.total_reports_count).toBe(3)
      expect(all.reports.map((r) => r.id)).toEqual([third.id, second.id, first.id])
      expect(all.reports[0]).toBeInstanceOf(Report.Report)
      expect(all.reports[0]).toEqual(Report.toReport(third))
      expect(Object.keys(all.reports[0]!)).not.toContain("playbook_id")

      const page = yield* service.get(alice, created.id, decodeGet({ limit: "1", offset: "1" }), sign)
      expect(page.reports.map((r) => r.id)).toEqual([second.id])
      expect(page.total_reports_count).toBe(3)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("serves each image of a report's run as its asset's URL, signed at the read, in the blocks and the preview", () =>
    Effect.gen(function*() {
      const { alice, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const chart = AssetId.make(Fixtures.uuid())
      const stored = new Report.ReportRecord({
        id: ReportId.make(Fixtures.uuid()),
        organization_id: org.id,
        playbook_id: created.id,
        subject: "stored",
        summary: "a report whose run rendered a chart",
        html_preview: "<p>as rendered by the run</p>",
        chat_id: ChatId.make(Fixtures.uuid()),
        created_at: yield* DateTime.now,
        blocks: [
          { type: "image", image_url: Report.assetRef(chart), image_alt: "Revenue" },
          { type: "card", blocks: [{ type: "image", image_url: "https://cdn.example.com/logo.png" }] },
          { type: "image", image_url: "chart:2" }
        ]
      })
      yield* Effect.orDie((yield* PlaybookRepo).addReport(stored))
      const [served] = (yield* service.get(alice, created.id, decodeGet({ limit: "1" }), sign)).reports
      const signed = `https://sightline.test/v2/assets/${chart}?signature=x`
      expect(served!.blocks.map((block) => block.image_url)).toEqual([signed, undefined, "chart:2"])
      expect(served!.blocks[1]!.blocks![0]!.image_url).toBe("https://cdn.example.com/logo.png")
      expect(served!.html_preview).toContain(`<img src="${signed}"`)
      expect(served!.html_preview).toContain(`<img src="https://cdn.example.com/logo.png"`)
      expect(served!.html_preview).not.toContain("asset:")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("hides the reports from a reader who cannot use every connector of the playbook", () =>
    Effect.gen(function*() {
      const { alice, bob, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const privateToAlice = yield* connector(org.id, alice.memberId, false)
      const created = yield* service.create(alice)
      yield* service.update(alice, created.id, decodeUpdate({ connector_ids: [privateToAlice] }))
      yield* addReport(org.id, created.id, "what the private connector answered")
      const forBob = yield* service.get(bob, created.id, noPaging, sign)
      expect(forBob.playbook.id).toBe(created.id)
      expect(forBob.reports).toEqual([])
      expect(forBob.total_reports_count).toBe(0)
      const forAlice = yield* service.get(alice, created.id, noPaging, sign)
      expect(forAlice.reports.map((r) => r.subject)).toEqual(["what the private connector answered"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 404 for another organization's playbook and for an unknown id", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const foreign = yield* failure(service.get(mallory, created.id, noPaging, sign))
      expect(foreign).toMatchObject({ _tag: "NotFound", message: "Resource not found" })
      const unknown = yield* failure(service.get(alice, PlaybookId.make(Fixtures.uuid()), noPaging, sign))
      expect(unknown._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs playbook:read (403), even for the creator", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const error = yield* failure(service.get({ ...alice, roles: [noPlaybooksRole] }, created.id, noPaging, sign))
      expect(error._tag).toBe("PermissionDenied")
    }).pipe(Effect.provide(TestLayer)))
})

// --- update ----------------------------------------------------------------------------------------

describe("Playbooks.update", () => {
  it.effect("applies the seed fields and answers the updated Playbook", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const channel = yield* Fixtures.chatChannel(alice.organizationId, alice.memberId)
      const created = yield* service.create(alice)
      yield* TestClock.adjust("5 minutes")
      const updated = yield* service.update(
        alice,
        created.id,
        decodeUpdate({
          name: "Weekly revenue",
          prompt: "Summarize revenue by region",
          cron_string: "0 9 * * 1",
          email_addresses: ["ops@example.com"],
          chat_channel_id: channel,
          dataset_ids: ["sales"],
          tagged_chat_user_ids: ["U1"],
          selected_template_data_ids: ["T1"]
        })
      )
      expect(updated).toMatchObject({
        id: created.id,
        name: "Weekly revenue",
        prompt: "Summarize revenue by region",
        status: "draft",
        cron_string: "0 9 * * 1",
        email_addresses: ["ops@example.com"],
        chat_channel_id: channel
      })
      expect(updated.updated_at).toEqual(yield* DateTime.now)
      expect(updated.created_at).toEqual(created.created_at)
      // Accepted but not returned.
      expect(Object.keys(updated)).not.toContain("dataset_ids")
      const stored = Option.getOrThrow(yield* (yield* PlaybookRepo).get(alice.organizationId, created.id))
      expect(stored.dataset_ids).toEqual(["sales"])
      expect(stored.tagged_chat_user_ids).toEqual(["U1"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses a chat channel of no channel of the organization when it is set, and changes nothing", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const foreign = yield* Fixtures.chatChannel(mallory.organizationId, mallory.memberId)
      for (const channel of ["C123", foreign, Fixtures.uuid()]) {
        const error = yield* failure(
          service.update(alice, created.id, decodeUpdate({ name: "x", chat_channel_id: channel }))
        )
        expect(error).toMatchObject({
          _tag: "InvalidRequest",
          message: `chat_channel_id: no chat channel ${JSON.stringify(channel)} in this organization`
        })
      }
      expect((yield* service.get(alice, created.id, noPaging, sign)).playbook.name).toBe("")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("clears the schedule and delivery targets with empty values", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const channel = yield* Fixtures.chatChannel(alice.organizationId, alice.memberId)
      yield* service.update(
        alice,
        created.id,
        decodeUpdate({ cron_string: "0 9 * * *", email_addresses: ["a@example.com"], chat_channel_id: channel })
      )
      const cleared = yield* service.update(
        alice,
        created.id,
        decodeUpdate({ cron_string: "", email_addresses: [], chat_channel_id: "" })
      )
      expect(Object.keys(cleared)).not.toContain("cron_string")
      expect(Object.keys(cleared)).not.toContain("email_addresses")
      expect(Object.keys(cleared)).not.toContain("chat_channel_id")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 403 for a member who can see but does not own the playbook, and without playbook:write", () =>
    Effect.gen(function*() {
      const { alice, bob } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const notOwner = yield* failure(service.update(bob, created.id, decodeUpdate({ name: "mine now" })))
      expect(notOwner._tag).toBe("PermissionDenied")
      // Not even an admin: roles never replace ownership.
      const admin = yield* failure(
        service.update({ ...bob, roles: [role("admin", [], true)] }, created.id, decodeUpdate({ name: "x" }))
      )
      expect(admin._tag).toBe("PermissionDenied")
      const readOnly = yield* failure(
        service.update({ ...alice, roles: [readerRole] }, created.id, decodeUpdate({ name: "x" }))
      )
      expect(readOnly._tag).toBe("PermissionDenied")
      const unchanged = yield* service.get(alice, created.id, noPaging, sign)
      expect(unchanged.playbook.name).toBe("")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 404 for another organization's playbook", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      const error = yield* failure(service.update(mallory, created.id, decodeUpdate({ name: "x" })))
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("attaches connectors the caller can use: its own and public ones", () =>
    Effect.gen(function*() {
      const { alice, bob, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const own = yield* connector(org.id, alice.memberId, false)
      const shared = yield* connector(org.id, bob.memberId, true)
      const created = yield* service.create(alice)
      const updated = yield* service.update(alice, created.id, decodeUpdate({ connector_ids: [own, shared, own] }))
      expect(updated.connector_ids).toEqual([own, shared])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 400 for a connector the caller cannot use, naming it, and changes nothing", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory, org, other } = yield* setup
      const service = yield* Playbooks.Playbooks
      const own = yield* connector(org.id, alice.memberId, false)
      const privateToBob = yield* connector(org.id, bob.memberId, false)
      const foreign = yield* connector(other.id, mallory.memberId, true)
      const created = yield* service.create(alice)
      for (const id of [privateToBob, foreign, 999_999 as ConnectorId]) {
        const error = yield* failure(
          service.update(alice, created.id, decodeUpdate({ name: "renamed", connector_ids: [own, id] }))
        )
        expect(error._tag).toBe("InvalidRequest")
        expect(error.message).toBe(`invalid connector_ids: connector ${id} not found or not accessible`)
      }
      // Using a connector is reading it: a key without connector:read cannot attach even its own,
      // and is told which permission it lacks (as for agents and apps: one rule for all of them).
      const withoutConnectorRead = role("playbooks only", ["playbook:read", "playbook:write"])
      const error = yield* failure(
        service.update({ ...alice, roles: [withoutConnectorRead] }, created.id, decodeUpdate({ connector_ids: [own] }))
      )
      expect(error._tag).toBe("PermissionDenied")
      expect(error.message).toBe("permission denied: connector:read required")
      const unchanged = yield* service.get(alice, created.id, noPaging, sign)
      expect(unchanged.playbook).toMatchObject({ name: "", connector_ids: [] })
    }).pipe(Effect.provide(TestLayer)))
})

// --- delete ----------------------------------------------------------------------------------------

describe("Playbooks.delete", () => {
  it.effect("deletes the playbook with its reports and answers {playbook_id, deleted_at}", () =>
    Effect.gen(function*() {
      const { alice, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      yield* addReport(org.id, created.id, "r")
      yield* TestClock.adjust("1 hour")
      const deleted = yield* service.delete(alice, created.id)
      expect(deleted).toEqual({ playbook_id: created.id, deleted_at: yield* DateTime.now })
      const gone = yield* failure(service.get(alice, created.id, noPaging, sign))
      expect(gone._tag).toBe("NotFound")
      const reports = yield* (yield* PlaybookRepo).listReports(org.id, created.id, { limit: 10, offset: 0 })
      expect(reports.totalCount).toBe(0)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 403 for a member who is not the owner and 404 across organizations", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      expect((yield* failure(service.delete(bob, created.id)))._tag).toBe("PermissionDenied")
      expect((yield* failure(service.delete(mallory, created.id)))._tag).toBe("NotFound")
      expect((yield* service.get(alice, created.id, noPaging, sign)).playbook.id).toBe(created.id)
    }).pipe(Effect.provide(TestLayer)))
})

// --- deploy ----------------------------------------------------------------------------------------

describe("Playbooks.deploy", () => {
  it.effect("deploys from any state, answering {playbook_id, deployed_at}; deploying again refreshes it", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      // An empty playbook could not run, so it is not deployed; with a prompt it is.
      const created = yield* service.create(alice)
      const empty = yield* failure(service.deploy(alice, created.id))
      expect(empty._tag).toBe("InvalidRequest")
      expect(empty.message).toBe(`playbook ${created.id} has no prompt: set one before running it`)
      expect((yield* service.get(alice, created.id, noPaging, sign)).playbook.status).toBe("draft")
      yield* service.update(alice, created.id, decodeUpdate({ prompt: "Revenue?" }))
      const first = yield* service.deploy(alice, created.id)
      expect(first).toEqual({ playbook_id: created.id, deployed_at: yield* DateTime.now })
      expect((yield* service.get(alice, created.id, noPaging, sign)).playbook.status).toBe("deployed")
      yield* TestClock.adjust("1 day")
      const again = yield* service.deploy(alice, created.id)
      expect(again.deployed_at).toEqual(yield* DateTime.now)
      const stored = Option.getOrThrow(yield* (yield* PlaybookRepo).get(alice.organizationId, created.id))
      expect(stored.deployed_at).toEqual(again.deployed_at)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 403 for a member who is not the owner, 404 across organizations and for unknown ids", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      expect((yield* failure(service.deploy(bob, created.id)))._tag).toBe("PermissionDenied")
      expect((yield* failure(service.deploy(mallory, created.id)))._tag).toBe("NotFound")
      expect((yield* failure(service.deploy(alice, PlaybookId.make(Fixtures.uuid()))))._tag).toBe("NotFound")
      expect((yield* service.get(alice, created.id, noPaging, sign)).playbook.status).toBe("draft")
    }).pipe(Effect.provide(TestLayer)))
})

// --- validateRun -----------------------------------------------------------------------------------

describe("Playbooks.validateRun", () => {
  it.effect("is 400 with a specific message for a blank prompt, for a dry run too", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      yield* service.update(alice, created.id, decodeUpdate({ prompt: "   " }))
      for (const dry_run of [false, true]) {
        const error = yield* failure(service.validateRun(alice, created.id, { dry_run }))
        expect(error._tag).toBe("InvalidRequest")
        expect(error.message).toBe(`playbook ${created.id} has no prompt: set one before running it`)
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("passes a playbook with a prompt and usable connectors, returning it for the run", () =>
    Effect.gen(function*() {
      const { alice, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const own = yield* connector(org.id, alice.memberId, false)
      const created = yield* service.create(alice)
      yield* service.update(alice, created.id, decodeUpdate({ prompt: "Revenue?", connector_ids: [own] }))
      const check = yield* service.validateRun(alice, created.id, { dry_run: true })
      expect(check.dryRun).toBe(true)
      expect(check.playbook).toMatchObject({ id: created.id, prompt: "Revenue?", connector_ids: [own] })
      // No connectors is fine: the agent still has Python and the ontology.
      const bare = yield* service.create(alice)
      yield* service.update(alice, bare.id, decodeUpdate({ prompt: "Hello" }))
      expect((yield* service.validateRun(alice, bare.id, { dry_run: false })).dryRun).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 400 when an attached connector is no longer usable by the caller", () =>
    Effect.gen(function*() {
      const { alice, bob, org } = yield* setup
      const service = yield* Playbooks.Playbooks
      const shared = yield* connector(org.id, bob.memberId, true)
      const created = yield* service.create(alice)
      yield* service.update(alice, created.id, decodeUpdate({ prompt: "Revenue?", connector_ids: [shared] }))
      const connectors = yield* ConnectorRepo
      yield* connectors.setAccess(org.id, shared, Connector.initialAccess(bob.memberId))
      const error = yield* failure(service.validateRun(alice, created.id, { dry_run: true }))
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message).toBe(
        `playbook ${created.id} cannot run: remove or regain access to its connectors: connector ${shared} not found or not accessible`
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 403 for a member who cannot change the playbook and 404 across organizations", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(alice)
      yield* service.update(alice, created.id, decodeUpdate({ prompt: "Revenue?" }))
      expect((yield* failure(service.validateRun(bob, created.id, { dry_run: true })))._tag).toBe("PermissionDenied")
      expect((yield* failure(service.validateRun(mallory, created.id, { dry_run: true })))._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))
})

// --- the scheduler's view --------------------------------------------------------------------------

describe("Playbooks.due and Playbooks.claim", () => {
  // The TestClock starts at 1970-01-01T00:00Z, so "0 9 * * *" first fires at 09:00 that day.
  const nineAm = DateTime.unsafeMake("1970-01-01T09:00:00Z")

  const scheduled = (principal: Policy.Principal, cron: string | undefined, deployed: boolean) =>
    Effect.gen(function*() {
      const service = yield* Playbooks.Playbooks
      const created = yield* service.create(principal)
      yield* service.update(
        principal,
        created.id,
        decodeUpdate({ prompt: "p", ...(cron ? { cron_string: cron } : {}) })
      )
      if (deployed) yield* service.deploy(principal, created.id)
      return created.id
    })

  it.effect("lists deployed playbooks whose schedule is due, across organizations, earliest first", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const daily = yield* scheduled(alice, "0 9 * * *", true)
      const hourly = yield* scheduled(mallory, "30 * * * *", true)
      yield* scheduled(alice, "0 9 * * *", false) // a draft never fires
      yield* scheduled(alice, undefined, true) // deployed without a schedule never fires

      expect(yield* service.due(DateTime.unsafeMake("1970-01-01T00:29:00Z"))).toEqual([])
      const atNine = yield* service.due(nineAm)
      expect(atNine.map((p) => p.id)).toEqual([hourly, daily])
      expect(atNine.map((p) => p.organization_id)).toEqual([mallory.organizationId, alice.organizationId])
      expect((yield* service.due(nineAm, 1)).map((p) => p.id)).toEqual([hourly])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("claims a due firing once and moves the schedule on", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const service = yield* Playbooks.Playbooks
      const daily = yield* scheduled(alice, "0 9 * * *", true)
      const now = DateTime.unsafeMake("1970-01-01T09:00:05Z")
      const fired = Option.getOrThrow(yield* service.claim(alice.organizationId, daily, now))
      expect(fired.scheduledAt).toEqual(nineAm)
      expect(fired.playbook.next_run_at).toEqual(DateTime.unsafeMake("1970-01-02T09:00:00Z"))
      // A second scheduler process (or a second tick) gets nothing.
      expect(yield* service.claim(alice.organizationId, daily, now)).toEqual(Option.none())
      expect(yield* service.due(now)).toEqual([])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("collapses missed firings into one, and claims nothing that is not due", () =>
    Effect.gen(function*() {
      const { alice, mallory } = yield* setup
      const service = yield* Playbooks.Playbooks
      const daily = yield* scheduled(alice, "0 9 * * *", true)
      const threeDaysLate = DateTime.unsafeMake("1970-01-04T12:00:00Z")
      const fired = Option.getOrThrow(yield* service.claim(alice.organizationId, daily, threeDaysLate))
      expect(fired.scheduledAt).toEqual(nineAm)
      expect(fired.playbook.next_run_at).toEqual(DateTime.unsafeMake("1970-01-05T09:00:00Z"))

      const notYet = yield* scheduled(alice, "0 9 * * *", true)
      expect(yield* service.claim(alice.organizationId, notYet, DateTime.unsafeMake("1970-01-01T08:00:00Z"))).toEqual(
        Option.none()
      )
      // Scoped by organization like every repository read.
      expect(yield* service.claim(mallory.organizationId, notYet, threeDaysLate)).toEqual(Option.none())
      // A schedule cleared after it was listed is no longer due.
      yield* service.update(alice, notYet, decodeUpdate({ cron_string: "" }))
      expect(yield* service.claim(alice.organizationId, notYet, threeDaysLate)).toEqual(Option.none())
    }).pipe(Effect.provide(TestLayer)))
})

import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ConnectorId, MemberId, OrganizationId, PlaybookId } from "../src/Ids.js"
import * as Playbook from "../src/Playbook.js"

const t0 = DateTime.unsafeMake("2026-01-15T09:30:00.000Z")
const t1 = DateTime.unsafeMake("2026-01-16T12:00:00.000Z")
const draft = Playbook.make({
  id: PlaybookId.make("00000000-0000-4000-8000-000000000001"),
  organizationId: OrganizationId.make("00000000-0000-4000-8000-000000000002"),
  ownerId: MemberId.make("00000000-0000-4000-8000-000000000003"),
  at: t0
})
const patch = (body: unknown) => Schema.decodeUnknownSync(Playbook.UpdatePlaybookRequest)(body)
const errorOf = (body: unknown) =>
  Either.match(Schema.decodeUnknownEither(Playbook.UpdatePlaybookRequest)(body), {
    onLeft: (e) => ParseResult.TreeFormatter.formatErrorSync(e),
    onRight: () => "decoded"
  })
const iso = (at: Option.Option<DateTime.Utc>) => Option.map(at, DateTime.formatIso)

describe("Playbook schedules", () => {
  it("a five-field cron expression is accepted", () => {
    for (const cron of ["0 9 * * 1-5", "*/15 * * * *", "0 0 1 * *"]) {
      expect(errorOf({ cron_string: cron })).toBe("decoded")
    }
  })

  it("an invalid expression is rejected with a message naming it", () => {
    expect(errorOf({ cron_string: "every monday" })).toContain(`invalid cron_string "every monday"`)
    expect(errorOf({ cron_string: "0 25 * * *" })).toContain(`invalid cron_string "0 25 * * *"`)
    expect(errorOf({ cron_string: "* * * * * *" })).toContain("expected five fields")
    expect(errorOf({ cron_string: "0 0 30 2 *" })).toContain("never fires")
  })

  it("nextRunAt is the next firing strictly after the given time, in UTC", () => {
    const daily = { cron_string: "0 9 * * *" }
    expect(iso(Playbook.nextRunAt(daily, t0))).toEqual(Option.some("2026-01-16T09:00:00.000Z"))
    expect(iso(Playbook.nextRunAt(daily, DateTime.unsafeMake("2026-01-16T09:00:00.000Z"))))
      .toEqual(Option.some("2026-01-17T09:00:00.000Z"))
    expect(Option.isNone(Playbook.nextRunAt({}, t0))).toBe(true)
  })
})

describe("Playbook lifecycle", () => {
  it("a new playbook is an empty draft", () => {
    expect(draft.status).toBe("draft")
    expect(draft).toMatchObject({ name: "", prompt: "", connector_ids: [], email_addresses: [] })
    expect(draft.deployed_at).toBeUndefined()
    expect(draft.next_run_at).toBeUndefined()
  })

  it("deploying succeeds from any state and redeploying refreshes deployed_at", () => {
    const deployed = Playbook.deploy(draft, t0)
    expect(deployed.status).toBe("deployed")
    expect(deployed.deployed_at).toEqual(t0)
    expect(deployed.updated_at).toEqual(t0)
    expect(deployed.next_run_at).toBeUndefined()
    const again = Playbook.deploy(deployed, t1)
    expect(again.status).toBe("deployed")
    expect(again.deployed_at).toEqual(t1)
  })

  it("deploying a scheduled playbook sets its next firing", () => {
    const scheduled = Playbook.applyUpdate(draft, patch({ cron_string: "0 9 * * *" }), t0)
    expect(scheduled.next_run_at).toBeUndefined()
    const deployed = Playbook.deploy(scheduled, t0)
    expect(iso(Option.fromNullable(deployed.next_run_at))).toEqual(Option.some("2026-01-16T09:00:00.000Z"))
  })

  it("editing keeps a deployed playbook deployed; a new schedule restarts from the edit", () => {
    const deployed = Playbook.deploy(Playbook.applyUpdate(draft, patch({ cron_string: "0 9 * * *" }), t0), t0)
    const renamed = Playbook.applyUpdate(deployed, patch({ name: "Weekly" }), t1)
    expect(renamed.status).toBe("deployed")
    expect(renamed.updated_at).toEqual(t1)
    // The pending firing (before t1) stays, so the scheduler still fires it.
    expect(renamed.next_run_at).toEqual(deployed.next_run_at)
    const rescheduled = Playbook.applyUpdate(deployed, patch({ cron_string: "30 18 * * *" }), t1)
    expect(iso(Option.fromNullable(rescheduled.next_run_at))).toEqual(Option.some("2026-01-16T18:30:00.000Z"))
    const unscheduled = Playbook.applyUpdate(deployed, patch({ cron_string: "" }), t1)
    expect(unscheduled.cron_string).toBeUndefined()
    expect(unscheduled.next_run_at).toBeUndefined()
  })

  it("an update replaces what was sent, keeps the rest, and an empty string clears", () => {
    const configured = Playbook.applyUpdate(
      draft,
      patch({
        name: "Revenue",
        prompt: "Summarize revenue",
        cron_string: "0 9 * * 1",
        connector_ids: [2, 1, 2],
        email_addresses: ["a@example.com", "A@example.com", "b@example.com"],
        chat_channel_id: "C123",
        dataset_ids: ["d1"],
        tagged_chat_user_ids: ["U1"],
        selected_template_data_ids: ["t1"]
      }),
      t1
    )
    expect(configured).toMatchObject({
      name: "Revenue",
      prompt: "Summarize revenue",
      cron_string: "0 9 * * 1",
      connector_ids: [2, 1],
      email_addresses: ["a@example.com", "b@example.com"],
      chat_channel_id: "C123",
      dataset_ids: ["d1"],
      tagged_chat_user_ids: ["U1"],
      selected_template_data_ids: ["t1"],
      status: "draft",
      updated_at: t1
    })
    const kept = Playbook.applyUpdate(configured, patch({ prompt: "New prompt" }), t1)
    expect(kept).toMatchObject({
      name: "Revenue",
      cron_string: "0 9 * * 1",
      chat_channel_id: "C123",
      prompt: "New prompt"
    })
    const cleared = Playbook.applyUpdate(
      configured,
      patch({ cron_string: "", chat_channel_id: "", email_addresses: [] }),
      t1
    )
    expect(cleared.cron_string).toBeUndefined()
    expect(cleared.chat_channel_id).toBeUndefined()
    expect(cleared.email_addresses).toEqual([])
    expect("cron_string" in cleared || "chat_channel_id" in cleared).toBe(false)
  })

  it("an update rejects bad e-mail addresses, an empty name and bad connector ids", () => {
    expect(errorOf({ email_addresses: ["not-an-address"] })).toContain("e-mail")
    expect(errorOf({ name: "" })).not.toBe("decoded")
    expect(errorOf({ connector_ids: [-1] })).not.toBe("decoded")
    expect(errorOf({ cron_string: null })).not.toBe("decoded")
  })

  it("due firings: deployed, scheduled and next_run_at reached; then the schedule moves on", () => {
    const scheduled = Playbook.applyUpdate(draft, patch({ cron_string: "0 9 * * *" }), t0)
    const deployed = Playbook.deploy(scheduled, t0)
    const nine = DateTime.unsafeMake("2026-01-16T09:00:00.000Z")
    expect(Playbook.isDue(deployed, DateTime.unsafeMake("2026-01-16T08:59:59.999Z"))).toBe(false)
    expect(Playbook.isDue(deployed, nine)).toBe(true)
    expect(Playbook.isDue(scheduled, nine)).toBe(false)
    const advanced = Playbook.advanceSchedule(deployed, nine)
    expect(iso(Option.fromNullable(advanced.next_run_at))).toEqual(Option.some("2026-01-17T09:00:00.000Z"))
    expect(Playbook.isDue(advanced, nine)).toBe(false)
  })

  it("previousFiring is the latest time at or before the given one", () => {
    const at = (iso: string) => DateTime.unsafeMake(iso)
    const iso = (o: Option.Option<DateTime.Utc>) => Option.map(o, DateTime.formatIso)
    expect(iso(Playbook.previousFiring("0 9 * * *", at("2026-01-16T10:00:00.000Z"))))
      .toEqual(Option.some("2026-01-16T09:00:00.000Z"))
    expect(iso(Playbook.previousFiring("0 9 * * *", at("2026-01-16T09:00:00.000Z"))))
      .toEqual(Option.some("2026-01-16T09:00:00.000Z"))
    expect(iso(Playbook.previousFiring("0 9 * * *", at("2026-01-16T08:59:59.000Z"))))
      .toEqual(Option.some("2026-01-15T09:00:00.000Z"))
    expect(Playbook.previousFiring("not a cron", at("2026-01-16T08:59:59.000Z"))).toEqual(Option.none())
  })

  it("names every problem that stops a run", () => {
    // Stored before the address rules, so built without validation.
    const broken = new Playbook.PlaybookRecord({ ...draft, email_addresses: ["a@b.c", "x\ny@z"] as never }, true)
    expect(Playbook.runProblems(broken)).toEqual([
      `playbook ${draft.id} has no prompt: set one before running it`,
      `email_addresses: "x\\ny@z" is not an e-mail address`
    ])
  })

  it("a playbook without a prompt cannot run", () => {
    const error = Either.flip(Playbook.validateRun(draft)).pipe(Either.getOrThrow)
    expect(error._tag).toBe("InvalidRequest")
    expect(error.message).toContain("has no prompt")
    expect(Either.isLeft(Playbook.validateRun(Playbook.applyUpdate(draft, patch({ prompt: "   " }), t1)))).toBe(true)
    expect(Either.isRight(Playbook.validateRun(Playbook.applyUpdate(draft, patch({ prompt: "Go" }), t1)))).toBe(true)
  })

  it("a playbook that delivers a dashboard needs no prompt; an empty string stops it, a bad name is refused", () => {
    const delivering = Playbook.applyUpdate(draft, patch({ dashboard: "sales" }), t1)
    expect(delivering.dashboard).toBe("sales")
    expect(Playbook.toPlaybook(delivering).dashboard).toBe("sales")
    expect(Either.isRight(Playbook.validateRun(delivering))).toBe(true)
    // Left alone by an update that does not name it.
    expect(Playbook.applyUpdate(delivering, patch({ name: "Mondays" }), t1).dashboard).toBe("sales")
    const cleared = Playbook.applyUpdate(delivering, patch({ dashboard: "" }), t1)
    expect(cleared).not.toHaveProperty("dashboard")
    expect(Playbook.toPlaybook(cleared)).not.toHaveProperty("dashboard")
    expect(Either.isLeft(Playbook.validateRun(cleared))).toBe(true)
    expect(errorOf({ dashboard: "../secrets" })).toContain("a dashboard's name is 1 to 64 lowercase letters")
  })
})

describe("Playbook wire shapes", () => {
  it("unset schedule and delivery fields are omitted", () => {
    const wire = Schema.encodeSync(Playbook.Playbook)(Playbook.toPlaybook(draft))
    expect(wire).toEqual({
      id: draft.id,
      name: "",
      prompt: "",
      status: "draft",
      created_at: "2026-01-15T09:30:00.000Z",
      updated_at: "2026-01-15T09:30:00.000Z",
      connector_ids: []
    })
    const configured = Playbook.applyUpdate(
      draft,
      patch({
        cron_string: "0 9 * * *",
        email_addresses: ["a@example.com"],
        chat_channel_id: "C1",
        connector_ids: [ConnectorId.make(4)],
        dataset_ids: ["hidden"]
      }),
      t0
    )
    expect(Schema.encodeSync(Playbook.Playbook)(Playbook.toPlaybook(configured))).toEqual({
      ...wire,
      connector_ids: [4],
      cron_string: "0 9 * * *",
      email_addresses: ["a@example.com"],
      chat_channel_id: "C1"
    })
  })

  it("list and get queries apply defaults and reject bad values", () => {
    expect(Schema.decodeUnknownSync(Playbook.ListPlaybooksQuery)({ status_filter: "deployed" })).toEqual({
      limit: 20,
      offset: 0,
      sort_by: "updated_at",
      sort_direction: "desc",
      status_filter: "deployed"
    })
    expect(Either.isLeft(Schema.decodeUnknownEither(Playbook.ListPlaybooksQuery)({ status_filter: "active" }))).toBe(
      true
    )
    expect(Either.isLeft(Schema.decodeUnknownEither(Playbook.ListPlaybooksQuery)({ limit: "0" }))).toBe(true)
    expect(Schema.decodeUnknownSync(Playbook.GetPlaybookQuery)({})).toEqual({ limit: 20, offset: 0 })
    expect(Either.isLeft(Schema.decodeUnknownEither(Playbook.GetPlaybookQuery)({ offset: "-2" }))).toBe(true)
    expect(Schema.decodeUnknownSync(Playbook.RunPlaybookRequest)({})).toEqual({ dry_run: false })
  })
})

describe("Playbook.upcomingFirings", () => {
  it("lists the next firings in UTC, or says why a schedule is invalid", () => {
    const after = DateTime.unsafeMake("2026-11-23T10:30:00Z")
    const firings = Either.getOrThrow(Playbook.upcomingFirings("0 9 * * 1-5", after, 5))
    expect(firings.map(DateTime.formatIso)).toEqual([
      "2026-11-24T09:00:00.000Z",
      "2026-11-25T09:00:00.000Z",
      "2026-11-26T09:00:00.000Z",
      "2026-11-27T09:00:00.000Z",
      "2026-11-30T09:00:00.000Z"
    ])
    expect(Either.getLeft(Playbook.upcomingFirings("0 9 * *", after, 5))).toEqual(
      Option.some(`invalid cron_string "0 9 * *": expected five fields (minute hour day-of-month month day-of-week)`)
    )
    expect(Either.isLeft(Playbook.upcomingFirings("0 0 30 2 *", after, 5))).toBe(true)
  })
})

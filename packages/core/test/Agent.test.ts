import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Agent from "../src/Agent.js"
import { AgentId, ConnectorId, MemberId, OrganizationId, WebhookTriggerId } from "../src/Ids.js"
import * as Playbook from "../src/Playbook.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const t0 = DateTime.unsafeMake("2026-03-01T10:00:00.000Z")
const t1 = DateTime.add(t0, { hours: 1 })

const errorOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string =>
  Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: (e) => e.message, onRight: () => "decoded" })

const body = { name: "Weekly revenue", prompt: "Summarize last week's revenue", connector_ids: [1, 2] }

const agent = Agent.make({
  id: AgentId.make(id(1)),
  organizationId: OrganizationId.make(id(2)),
  ownerId: MemberId.make(id(3)),
  webhookTriggerId: WebhookTriggerId.make(id(4)),
  request: Schema.decodeUnknownSync(Agent.CreateRequest)({
    ...body,
    tools: ["sql"],
    cron_strings: ["0 9 * * 1"],
    email_addresses: ["ada@example.com"],
    chat_channel_id: "C42"
  }),
  at: t0
})

describe("Agent.CreateRequest", () => {
  it("accepts the documented body, optional fields omitted", () => {
    expect(Schema.decodeUnknownSync(Agent.CreateRequest)(body)).toEqual(body)
  })

  it("requires a name, a prompt and connector ids", () => {
    for (const key of ["name", "prompt", "connector_ids"] as const) {
      const { [key]: _, ...rest } = body
      expect(errorOf(Agent.CreateRequest, rest)).toContain(key)
    }
    expect(errorOf(Agent.CreateRequest, { ...body, name: "   " })).not.toBe("decoded")
    expect(errorOf(Agent.CreateRequest, { ...body, name: "x".repeat(Agent.NAME_MAX_LENGTH + 1) })).not.toBe("decoded")
    expect(errorOf(Agent.CreateRequest, { ...body, connector_ids: [0] })).not.toBe("decoded")
  })

  it("validates every cron string with the playbooks' schema: five fields, UTC, must fire", () => {
    expect(Agent.CronString).toBe(Playbook.CronString)
    expect(errorOf(Agent.CreateRequest, { ...body, cron_strings: ["0 9 * * 1-5", "*/10 * * * *"] })).toBe("decoded")
    for (const cron of ["0 9 * *", "61 * * * *", "every monday", "*/10 * * * * *", "* * * * * * *", "0 0 30 2 *"]) {
      expect(errorOf(Agent.CreateRequest, { ...body, cron_strings: ["0 9 * * *", cron] })).toContain(
        `invalid cron_string ${JSON.stringify(cron)}`
      )
    }
  })

  it("validates every e-mail address", () => {
    expect(errorOf(Agent.CreateRequest, { ...body, email_addresses: ["a@b.co"] })).toBe("decoded")
    for (const email of ["not-an-email", "a@b", "a b@c.de"]) {
      expect(errorOf(Agent.CreateRequest, { ...body, email_addresses: [email] })).toContain("must be an e-mail address")
    }
  })
})

describe("Agent.make", () => {
  it("stores the body with the owner, trigger id and timestamps", () => {
    expect(agent).toMatchObject({
      name: "Weekly revenue",
      owner_id: id(3),
      webhook_trigger_id: id(4),
      tools: ["sql"],
      cron_strings: ["0 9 * * 1"],
      email_addresses: ["ada@example.com"],
      chat_channel_id: "C42",
      created_at: t0,
      updated_at: t0
    })
  })

  it("defaults the lists to empty and leaves tools and channel unset", () => {
    const minimal = Agent.make({
      id: AgentId.make(id(1)),
      organizationId: OrganizationId.make(id(2)),
      ownerId: MemberId.make(id(3)),
      webhookTriggerId: WebhookTriggerId.make(id(4)),
      request: Schema.decodeUnknownSync(Agent.CreateRequest)(body),
      at: t0
    })
    expect(minimal).toMatchObject({ cron_strings: [], email_addresses: [] })
    expect("tools" in minimal).toBe(false)
    expect("chat_channel_id" in minimal).toBe(false)
  })
})

describe("Agent.update", () => {
  it("changes only the fields present and moves updated_at", () => {
    const patch = Schema.decodeUnknownSync(Agent.UpdateRequest)({ prompt: "New prompt", connector_ids: [7] })
    const updated = Agent.update(agent, patch, t1)
    expect(updated).toMatchObject({ prompt: "New prompt", connector_ids: [ConnectorId.make(7)], updated_at: t1 })
    expect(updated).toMatchObject({ name: agent.name, tools: agent.tools, chat_channel_id: "C42", created_at: t0 })
    expect(updated.webhook_trigger_id).toBe(agent.webhook_trigger_id)
  })

  it("null clears tools and the channel; an empty list clears crons and e-mails", () => {
    const patch = Schema.decodeUnknownSync(Agent.UpdateRequest)({
      tools: null,
      chat_channel_id: null,
      cron_strings: [],
      email_addresses: []
    })
    const cleared = Agent.update(agent, patch, t1)
    expect("tools" in cleared).toBe(false)
    expect("chat_channel_id" in cleared).toBe(false)
    expect(cleared).toMatchObject({ cron_strings: [], email_addresses: [] })
  })

  it("an empty patch keeps every field", () => {
    const same = Agent.update(agent, {}, t1)
    expect(Schema.encodeSync(Agent.Agent)(same)).toEqual({
      ...Schema.encodeSync(Agent.Agent)(agent),
      updated_at: "2026-03-01T11:00:00.000Z"
    })
  })

  it("a patch is validated like a create body", () => {
    expect(errorOf(Agent.UpdateRequest, { cron_strings: ["nope"] })).toContain("invalid cron_string")
    expect(errorOf(Agent.UpdateRequest, { email_addresses: ["nope"] })).toContain("must be an e-mail address")
    expect(errorOf(Agent.UpdateRequest, { name: "" })).not.toBe("decoded")
    expect(errorOf(Agent.UpdateRequest, { name: null })).not.toBe("decoded")
  })
})

describe("Agent.View", () => {
  it("serves every field but the organization", () => {
    const encoded = Schema.encodeSync(Agent.View)(agent)
    expect(encoded).not.toHaveProperty("organization_id")
    expect(encoded).toMatchObject({ id: id(1), webhook_trigger_id: id(4), created_at: "2026-03-01T10:00:00.000Z" })
  })
})

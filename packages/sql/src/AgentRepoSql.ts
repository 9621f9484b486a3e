/**
 * Core's `AgentRepo` port over SQL: `<prefix>agents`, and their runs in `<prefix>agent_runs`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Agent, ChatChannelId } from "@sightline/core/Agent"
import { AgentRepo } from "@sightline/core/AgentRepo"
import { AgentRun, keyset } from "@sightline/core/AgentRun"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { AgentId, AgentRunId, ChatId, OrganizationId, WebhookTriggerId } from "@sightline/core/Ids"
import { JsonObject } from "@sightline/core/Json"
import * as Traced from "@sightline/core/Traced"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>agents` ↔ an `Agent`: NULL columns are absent optional fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentFromRow = Schema.transform(
  Schema.Struct({
    ...Agent.fields,
    tools: RowSql.nullable(Agent.fields.tools.from),
    chat_channel_id: RowSql.nullable(ChatChannelId),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(Agent),
  { strict: true, decode: (row) => new Agent(row, true), encode: (agent) => agent }
)

/**
 * A row of `<prefix>agent_runs` ↔ an `AgentRun`. Both drivers parse `jsonb`, so `payload` arrives as
 * an object; NULL columns are absent optional fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentRunFromRow = Schema.transform(
  Schema.Struct({
    ...AgentRun.fields,
    chat_id: RowSql.nullable(ChatId),
    payload: RowSql.nullable(JsonObject),
    error: RowSql.nullable(Schema.String),
    created_at: Schema.DateTimeUtcFromDate,
    started_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    finished_at: RowSql.nullable(Schema.DateTimeUtcFromDate)
  }),
  Schema.typeSchema(AgentRun),
  { strict: true, decode: (row) => new AgentRun(row, true), encode: (run) => run }
)

const AgentKey = Schema.Struct({ organization_id: OrganizationId, id: AgentId })
const RunKey = Schema.Struct({ organization_id: OrganizationId, id: AgentRunId })
const Written = Schema.Struct({ id: Schema.String })

/** What one page query of `listRuns` needs. */
const RunsRequest = Schema.Struct({
  organization_id: OrganizationId,
  agent_id: AgentId,
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(AgentRunId),
  limit: Schema.Int
})

/**
 * The agent repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<AgentRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const agents = sql(prefix.name("agents"))
    const runs = sql(prefix.name("agent_runs"))
    const keyNames = ["id", "organization_id"]
    const agentFieldNames = [
      "owner_id",
      "name",
      "prompt",
      "connector_ids",
      "tools",
      "cron_strings",
      "email_addresses",
      "chat_channel_id",
      "webhook_trigger_id",
      "created_at",
      "updated_at"
    ]
    const agentColumns = sql.literal([...keyNames, ...agentFieldNames].join(", "))
    const runFieldNames = [
      "agent_id",
      "trigger_source",
      "status",
      "chat_id",
      "payload",
      "error",
      "created_at",
      "started_at",
      "finished_at"
    ]
    const runColumns = sql.literal([...keyNames, ...runFieldNames].join(", "))
    const runValues = (row: typeof AgentRunFromRow.Encoded, columns: ReadonlyArray<string>) =>
      RowSql.values(row, columns, ["payload"])

    // `ON CONFLICT DO NOTHING` without a target covers both the id and the webhook trigger id, and
    // raises no error that would abort a caller's transaction.
    const insertAgent = SqlSchema.findOne({
      Request: AgentFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${agents} ${sql.insert(RowSql.values(row, [...keyNames, ...agentFieldNames]))}
            ON CONFLICT DO NOTHING RETURNING id`
    })
    const findAgent = (lock: boolean) =>
      SqlSchema.findOne({
        Request: AgentKey,
        Result: AgentFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${agentColumns} FROM ${agents} WHERE organization_id = ${organization_id} AND id = ${id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const findAgentById = findAgent(false)
    const findAgentForUpdate = findAgent(true)
    const findByTrigger = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, webhook_trigger_id: WebhookTriggerId }),
      Result: AgentFromRow,
      execute: ({ organization_id, webhook_trigger_id }) =>
        sql`SELECT ${agentColumns} FROM ${agents}
            WHERE organization_id = ${organization_id} AND webhook_trigger_id = ${webhook_trigger_id}`
    })
    const listAgents = SqlSchema.findAll({
      Request: OrganizationId,
      Result: AgentFromRow,
      execute: (organizationId) =>
        sql`SELECT ${agentColumns} FROM ${agents} WHERE organization_id = ${organizationId}
            ORDER BY created_at DESC, id DESC`
    })
    const listScheduled = SqlSchema.findAll({
      Request: Schema.Void,
      Result: AgentFromRow,
      execute: () => sql`SELECT ${agentColumns} FROM ${agents} WHERE cardinality(cron_strings) > 0`
    })
    // Every column but the key is replaced, so a field that became absent becomes NULL.
    const replaceAgent = SqlSchema.findOne({
      Request: AgentFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${agents} SET ${sql.update(RowSql.values(row, agentFieldNames))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })
    // Runs go with their agent by `ON DELETE CASCADE`.
    const removeAgent = SqlSchema.findOne({
      Request: AgentKey,
      Result: Written,
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${agents} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    const insertRun = SqlSchema.findOne({
      Request: AgentRunFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${runs} ${sql.insert(runValues(row, [...keyNames, ...runFieldNames]))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const findRun = (lock: boolean) =>
      SqlSchema.findOne({
        Request: RunKey,
        Result: AgentRunFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${runColumns} FROM ${runs} WHERE organization_id = ${organization_id} AND id = ${id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const findRunById = findRun(false)
    const findRunForUpdate = findRun(true)
    // Newest first; the row comparison is an index condition on `(organization_id, agent_id, created_at, id)`.
    const runsPage = SqlSchema.findAll({
      Request: RunsRequest,
      Result: AgentRunFromRow,
      execute: (request) =>
        sql`SELECT ${runColumns} FROM ${runs} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            sql`agent_id = ${request.agent_id}`,
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(created_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })
    const replaceRun = SqlSchema.findOne({
      Request: AgentRunFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${runs} SET ${sql.update(runValues(row, runFieldNames))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })

    const getRun = (lock: boolean) => (organizationId: OrganizationId, id: AgentRunId) =>
      Effect.orDie((lock ? findRunForUpdate : findRunById)({ organization_id: organizationId, id }))

    return AgentRepo.of({
      create: Traced.fn("AgentRepoSql.create")(function*(agent) {
        if (Option.isNone(yield* Effect.orDie(insertAgent(agent)))) {
          return yield* new Conflict({
            message: `an agent with id ${agent.id} or with this webhook trigger id already exists`
          })
        }
      }),
      get: Traced.fn("AgentRepoSql.get")((organizationId, id) =>
        Effect.orDie(findAgentById({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("AgentRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(findAgentForUpdate({ organization_id: organizationId, id }))
      ),
      getByTriggerId: Traced.fn("AgentRepoSql.getByTriggerId")((organizationId, triggerId) =>
        Effect.orDie(findByTrigger({ organization_id: organizationId, webhook_trigger_id: triggerId }))
      ),
      list: Traced.fn("AgentRepoSql.list")((organizationId) => Effect.orDie(listAgents(organizationId))),
      listScheduled: Traced.fn("AgentRepoSql.listScheduled")(() => Effect.orDie(listScheduled(undefined))),
      update: Traced.fn("AgentRepoSql.update")(function*(agent) {
        if (Option.isNone(yield* Effect.orDie(replaceAgent(agent)))) return yield* new NotFound()
      }),
      detachConnector: Traced.fn("AgentRepoSql.detachConnector")((organizationId, connectorId, at) =>
        Effect.orDie(
          sql`UPDATE ${agents}
              SET connector_ids = array_remove(connector_ids, ${connectorId}::integer),
                  updated_at = ${DateTime.toDateUtc(at)}
              WHERE organization_id = ${organizationId} AND ${connectorId}::integer = ANY (connector_ids)`
        ).pipe(Effect.asVoid)
      ),
      delete: Traced.fn("AgentRepoSql.delete")((organizationId, id) =>
        Effect.map(Effect.orDie(removeAgent({ organization_id: organizationId, id })), Option.isSome)
      ),

      createRun: Traced.fn("AgentRepoSql.createRun")(function*(run) {
        if (Option.isNone(yield* Effect.orDie(insertRun(run)))) {
          return yield* new Conflict({ message: `an agent run with id ${run.id} already exists` })
        }
      }),
      getRun: Traced.fn("AgentRepoSql.getRun")(getRun(false)),
      getRunForUpdate: Traced.fn("AgentRepoSql.getRunForUpdate")(getRun(true)),
      listRuns: Traced.fn("AgentRepoSql.listRuns")((organizationId, agentId, request) =>
        KeysetPage.page(
          { after: request.after, limit: request.limit, id: KeysetPage.uuidId(AgentRunId.make), keyset },
          (position) => Effect.orDie(runsPage({ organization_id: organizationId, agent_id: agentId, ...position }))
        )
      ),
      updateRun: Traced.fn("AgentRepoSql.updateRun")(function*(run) {
        if (Option.isNone(yield* Effect.orDie(replaceRun(run)))) return yield* new NotFound()
      })
    })
  }
)

/**
 * `AgentRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AgentRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(AgentRepo, make)

/**
 * Core's `PlaybookRepo` port over SQL: `<prefix>playbooks`, with their reports in
 * `<prefix>playbook_reports`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { OrganizationId, PlaybookId } from "@sightline/core/Ids"
import { PlaybookRecord } from "@sightline/core/Playbook"
import { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import { ReportRecord } from "@sightline/core/Report"
import * as Traced from "@sightline/core/Traced"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as PoolRead from "./internal/poolRead.js"
import * as RowSql from "./internal/rowSql.js"
import { likeContaining } from "./internal/search.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>playbooks` ↔ a `PlaybookRecord`: NULL columns are absent optional fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlaybookFromRow = Schema.transform(
  Schema.Struct({
    ...PlaybookRecord.fields,
    cron_string: RowSql.nullable(PlaybookRecord.fields.cron_string.from),
    chat_channel_id: RowSql.nullable(Schema.String),
    dashboard: RowSql.nullable(Schema.String),
    audience: RowSql.nullable(Schema.String),
    deployed_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    next_run_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(PlaybookRecord),
  { strict: true, decode: (row) => TrustedSchema.make(PlaybookRecord, row), encode: (playbook) => playbook }
)

/**
 * A row of `<prefix>playbook_reports` ↔ a `ReportRecord` (`blocks` is JSON, decoded by the driver).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReportFromRow = Schema.transform(
  Schema.Struct({ ...ReportRecord.fields, created_at: Schema.DateTimeUtcFromDate }),
  Schema.typeSchema(ReportRecord),
  { strict: true, decode: (row) => TrustedSchema.make(ReportRecord, row), encode: (report) => report }
)

const PlaybookKey = Schema.Struct({ organization_id: OrganizationId, id: PlaybookId })
const Written = Schema.Struct({ id: Schema.String })

/**
 * The playbook repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<PlaybookRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const compiledRead = yield* PoolRead.compiledReader
    const prefix = yield* TablePrefix
    const playbooks = sql(prefix.name("playbooks"))
    const reports = sql(prefix.name("playbook_reports"))
    const chats = sql(prefix.name("chats"))
    const fieldNames = [
      "owner_id",
      "name",
      "prompt",
      "status",
      "connector_ids",
      "cron_string",
      "email_addresses",
      "chat_channel_id",
      "dashboard",
      "dataset_ids",
      "tagged_chat_user_ids",
      "selected_template_data_ids",
      "deployed_at",
      "next_run_at",
      "created_at",
      "updated_at"
    ]
    // The audience is set when the playbook is made and never changes, so updates leave it alone.
    const keyNames = ["id", "organization_id", "audience"]
    const columns = sql.literal(RowSql.selectList([...keyNames, ...fieldNames]))
    const reportNames = [
      "id",
      "organization_id",
      "playbook_id",
      "chat_id",
      "subject",
      "summary",
      "blocks",
      "html_preview",
      "deliveries",
      "created_at"
    ]
    const reportColumns = sql.literal(reportNames.join(", "))
    // The timestamps of a report row read as JSON.
    const reportDates = ["created_at"]

    const insert = SqlSchema.findOne({
      Request: PlaybookFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${playbooks} ${
          sql.insert({ ...RowSql.values(row, [...keyNames, ...fieldNames]), audience: row.audience ?? "" })
        }
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const findPlaybook = (lock: "" | "FOR UPDATE") =>
      SqlSchema.findOne({
        Request: PlaybookKey,
        Result: PlaybookFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${columns} FROM ${playbooks}
              WHERE organization_id = ${organization_id} AND id = ${id} ${sql.literal(lock)}`
      })
    const findById = findPlaybook("")
    const findForUpdate = findPlaybook("FOR UPDATE")
    // Every column but the key is replaced, so a field that became absent becomes NULL.
    const replace = SqlSchema.findOne({
      Request: PlaybookFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${playbooks} SET ${sql.update(RowSql.values(row, fieldNames))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })
    // Reports go with their playbook by `ON DELETE CASCADE`.
    const remove = SqlSchema.findOne({
      Request: PlaybookKey,
      Result: Written,
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${playbooks} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    const ListRequest = Schema.Struct({
      organization_id: OrganizationId,
      status: Schema.optional(Schema.String),
      audience: Schema.optional(Schema.String),
      pattern: Schema.optional(Schema.String)
    })
    const listFilter = (request: typeof ListRequest.Encoded) =>
      sql.and([
        sql`organization_id = ${request.organization_id}`,
        ...(request.status === undefined ? [] : [sql`status = ${request.status}`]),
        ...(request.audience === undefined ? [] : [sql`audience = ${request.audience}`]),
        // The same expressions as the trigram indexes, so that PostgreSQL with `pg_trgm` uses them.
        ...(request.pattern === undefined ? [] : [
          sql`(lower(name) LIKE lower(${request.pattern}) OR lower(prompt) LIKE lower(${request.pattern}))`
        ])
      ])
    const listPage = SqlSchema.findAll({
      Request: Schema.Struct({
        ...ListRequest.fields,
        sort: Schema.Literal("name", "created_at", "updated_at"),
        direction: Schema.Literal("asc", "desc"),
        limit: Schema.Int,
        offset: Schema.Int
      }),
      Result: PlaybookFromRow,
      execute: (request) => {
        // The expressions of the sort indexes; ties by id in the same direction.
        const key = request.sort === "name" ? `lower(name) COLLATE "C"` : request.sort
        const direction = request.direction === "asc" ? "ASC" : "DESC"
        return sql`SELECT ${columns} FROM ${playbooks} WHERE ${listFilter(request)}
                   ORDER BY ${sql.literal(`${key} ${direction}, id ${direction}`)}
                   LIMIT ${request.limit} OFFSET ${request.offset}`
      }
    })
    const listCount = SqlSchema.single({
      Request: ListRequest,
      Result: Schema.Struct({ total: Schema.Number }),
      execute: (request) => sql`SELECT count(*)::int AS total FROM ${playbooks} WHERE ${listFilter(request)}`
    })

    // One statement: the playbook and the chat must both be the organization's (the foreign keys
    // would say so too, but as errors); an id already taken inserts nothing.
    const insertReport = SqlSchema.single({
      Request: ReportFromRow,
      Result: Schema.Struct({ playbook_found: Schema.Number, chat_found: Schema.Number, written: Schema.Number }),
      execute: (r) =>
        sql`WITH playbook AS (
              SELECT id FROM ${playbooks} WHERE organization_id = ${r.organization_id} AND id = ${r.playbook_id}
            ), chat AS (
              SELECT id FROM ${chats} WHERE organization_id = ${r.organization_id} AND id = ${r.chat_id}
            ), inserted AS (
              INSERT INTO ${reports} (${reportColumns})
              SELECT ${r.id}::uuid, ${r.organization_id}::uuid, playbook.id, chat.id, ${r.subject}::text,
                     ${r.summary}::text, ${JSON.stringify(r.blocks)}::jsonb, ${r.html_preview}::text,
                     ${JSON.stringify(r.deliveries ?? [])}::jsonb, ${r.created_at}::timestamptz
              FROM playbook, chat
              ON CONFLICT (id) DO NOTHING
              RETURNING 1
            )
            SELECT (SELECT count(*)::int FROM playbook) AS playbook_found,
                   (SELECT count(*)::int FROM chat) AS chat_found,
                   (SELECT count(*)::int FROM inserted) AS written`
    })
    // A page of a playbook's reports and their total in one statement, so both come from one
    // snapshot: as two, a report stored between them was counted but missing from the page. The
    // count is the row that is always there; the page joins it (no report: one row of nulls). A join
    // `ON true` can only be a nested loop, which emits the page's rows in the page's own order; an
    // outer ORDER BY would add a sort the index already spares.
    const countedWithPage = (organizationId: OrganizationId, playbookId: PlaybookId, limit: number, offset: number) =>
      sql`(SELECT count(*)::int AS total FROM ${reports}
           WHERE organization_id = ${organizationId} AND playbook_id = ${playbookId}) AS counted
          LEFT JOIN LATERAL (
            SELECT ${reportColumns} FROM ${reports}
            WHERE organization_id = ${organizationId} AND playbook_id = ${playbookId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}
          ) AS page ON true`
    // Rows of its own tables, read on every playbook read: decoded without checking them again.
    const decodeReports = TrustedSchema.decoder(Schema.Array(ReportFromRow))
    const findReportsPage = (organizationId: OrganizationId, playbookId: PlaybookId, limit: number, offset: number) =>
      Effect.flatMap(
        sql<{ readonly total: number; readonly id: string | null }>`
          SELECT page.*, counted.total FROM ${countedWithPage(organizationId, playbookId, limit, offset)}`,
        (rows) =>
          Effect.sync(() => ({
            reports: decodeReports(rows.filter((row) => row.id !== null)),
            totalCount: rows[0]?.total ?? 0
          }))
      )
    // The playbook with the same page and total, in one row (none when there is no playbook): the
    // page as one JSON column, which `pg` parses natively, rather than ten more columns whose
    // descriptions `pg` reads on every execution. The aggregate keeps its sorted subquery's order
    // (PostgreSQL's documented behaviour for an aggregate over an ordered subquery), so the index
    // gives the page its order and no sort is added.
    const playbookColumns = sql.literal(RowSql.selectList([...keyNames, ...fieldNames], "p."))
    const decodePlaybook = TrustedSchema.decoder(PlaybookFromRow)
    const withReports = compiledRead((organizationId: OrganizationId, id: PlaybookId, limit: number, offset: number) =>
      sql<Record<string, unknown>>`
          SELECT ${playbookColumns}, counted.total, page.reports
          FROM ${playbooks} p
          CROSS JOIN (SELECT count(*)::int AS total FROM ${reports}
            WHERE organization_id = ${organizationId} AND playbook_id = ${id}) AS counted
          CROSS JOIN LATERAL (
            SELECT coalesce(json_agg(r), '[]')::text AS reports FROM (
              SELECT ${reportColumns} FROM ${reports}
              WHERE organization_id = ${organizationId} AND playbook_id = ${id}
              ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}
            ) AS r
          ) AS page
          WHERE p.organization_id = ${organizationId} AND p.id = ${id}`
    )
    const findWithReports = (organizationId: OrganizationId, id: PlaybookId, limit: number, offset: number) =>
      Effect.map(
        withReports(organizationId, id, limit, offset),
        ([first]) =>
          first === undefined ? Option.none() : Option.some({
            playbook: decodePlaybook(first),
            page: {
              reports: decodeReports(RowSql.datesIn(JSON.parse(first.reports as string), reportDates)),
              totalCount: first.total as number
            }
          })
      )
    // Exactly the predicate of the partial index `playbooks_due_idx`, so the scheduler's read is a
    // range scan of due rows whatever the number of playbooks.
    const findDue = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateTimeUtcFromDate, limit: Schema.Int }),
      Result: PlaybookFromRow,
      execute: ({ limit, now }) =>
        sql`SELECT ${columns} FROM ${playbooks}
            WHERE status = 'deployed' AND next_run_at IS NOT NULL AND next_run_at <= ${now}
            ORDER BY next_run_at, id LIMIT ${limit}`
    })

    const notFound = (id: PlaybookId) => new NotFound({ message: `playbook ${id} not found` })
    const orNotFound = (id: PlaybookId) =>
      Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: () => Effect.void })

    return PlaybookRepo.of({
      create: Traced.fn("PlaybookRepoSql.create")((playbook) =>
        Effect.flatMap(
          Effect.orDie(insert(playbook)),
          Option.match({
            onNone: () => Effect.fail(new Conflict({ message: `playbook ${playbook.id} already exists` })),
            onSome: () => Effect.void
          })
        )
      ),
      get: Traced.fn("PlaybookRepoSql.get")((organizationId, id) =>
        Effect.orDie(findById({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("PlaybookRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(findForUpdate({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("PlaybookRepoSql.list")(
        function*(organizationId: OrganizationId, options: PlaybookRepo.ListOptions) {
          const term = options.searchTerm ?? ""
          const request = {
            organization_id: organizationId,
            ...(options.status === undefined ? {} : { status: options.status }),
            ...(options.audience === undefined ? {} : { audience: options.audience }),
            ...(term === "" ? {} : { pattern: likeContaining(term) })
          }
          const [rows, count] = yield* Effect.orDie(Effect.all([
            listPage({
              ...request,
              sort: options.sortBy,
              direction: options.sortDirection,
              limit: options.limit,
              offset: options.offset
            }),
            listCount(request)
          ]))
          return { rows, totalCount: count.total }
        }
      ),
      update: Traced.fn("PlaybookRepoSql.update")((playbook) =>
        Effect.flatMap(Effect.orDie(replace(playbook)), orNotFound(playbook.id))
      ),
      detachConnector: Traced.fn("PlaybookRepoSql.detachConnector")((organizationId, connectorId, at) =>
        Effect.orDie(
          sql`UPDATE ${playbooks}
              SET connector_ids = array_remove(connector_ids, ${connectorId}::integer),
                  updated_at = ${DateTime.toDateUtc(at)}
              WHERE organization_id = ${organizationId} AND ${connectorId}::integer = ANY (connector_ids)`
        ).pipe(Effect.asVoid)
      ),
      delete: Traced.fn("PlaybookRepoSql.delete")((organizationId, id) =>
        Effect.flatMap(Effect.orDie(remove({ organization_id: organizationId, id })), orNotFound(id))
      ),

      addReport: Traced.fn("PlaybookRepoSql.addReport")(function*(report: ReportRecord) {
        const outcome = yield* Effect.orDie(insertReport(report))
        if (outcome.playbook_found === 0) return yield* Effect.fail(notFound(report.playbook_id))
        if (outcome.chat_found === 0) {
          return yield* Effect.fail(new NotFound({ message: `chat ${report.chat_id} not found` }))
        }
        if (outcome.written === 0) {
          return yield* Effect.fail(new Conflict({ message: `report ${report.id} already exists` }))
        }
      }),
      listReports: Traced.fn("PlaybookRepoSql.listReports")(function*(
        organizationId: OrganizationId,
        playbookId: PlaybookId,
        page: { readonly limit: number; readonly offset: number }
      ) {
        return yield* Effect.orDie(findReportsPage(organizationId, playbookId, page.limit, page.offset))
      }),

      getWithReports: Traced.fn("PlaybookRepoSql.getWithReports")((organizationId, id, page) =>
        Effect.orDie(findWithReports(organizationId, id, page.limit, page.offset))
      ),

      listDue: Traced.fn("PlaybookRepoSql.listDue")((now: DateTime.Utc, limit: number) =>
        Effect.orDie(findDue({ now, limit }))
      )
    })
  }
)

/**
 * `PlaybookRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<PlaybookRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  PlaybookRepo,
  make
)

/**
 * Core's `ChatRepo` port over SQL: `<prefix>chats`, with `<prefix>chat_messages`,
 * `<prefix>chat_cells` and `<prefix>chat_assets` beside it.
 *
 * Child writes are single statements that find the chat of the child's organization first, so that
 * "no such chat" (`NotFound`) and "id taken" (`Conflict`) come back as counts rather than as errors:
 * no savepoint is needed and a caller's transaction goes on after either.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { AssetRecord } from "@sightline/core/Asset"
import { CellRecord, ChatRecord, MessageRecord } from "@sightline/core/Chat"
import * as ChatEvent from "@sightline/core/ChatEvent"
import { ChatRepo } from "@sightline/core/ChatRepo"
import { Clarification } from "@sightline/core/Clarification"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { AssetId, CellId, ChatId, ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import { Provenance } from "@sightline/core/Provenance"
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
 * A row of `<prefix>chats` ↔ a `ChatRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatFromRow = Schema.transform(
  Schema.Struct({
    ...ChatRecord.fields,
    run_traceparent: RowSql.nullable(Schema.String),
    connector_ids: RowSql.nullable(Schema.Array(ConnectorId)),
    audience: RowSql.nullable(Schema.String),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(ChatRecord),
  { strict: true, decode: (row) => TrustedSchema.make(ChatRecord, row), encode: (chat) => chat }
)

/**
 * A row of `<prefix>chat_messages` ↔ a `MessageRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageFromRow = Schema.transform(
  Schema.Struct({
    ...MessageRecord.fields,
    provenance: RowSql.nullable(Provenance),
    clarification: RowSql.nullable(Clarification),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(MessageRecord),
  { strict: true, decode: (row) => TrustedSchema.make(MessageRecord, row), encode: (message) => message }
)

/** A message's provenance as a `jsonb` parameter; NULL when it has none. */
const provenanceText = (row: typeof MessageFromRow.Encoded): string | null =>
  row.provenance === undefined || row.provenance === null ? null : RowSql.jsonText(row.provenance)

/** A message's clarification as a `jsonb` parameter; NULL when it asked none. */
const clarificationText = (row: typeof MessageFromRow.Encoded): string | null =>
  row.clarification === undefined || row.clarification === null ? null : RowSql.jsonText(row.clarification)

/**
 * A row of `<prefix>chat_cells` ↔ a `CellRecord`: NULL columns are absent optional fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CellFromRow = Schema.transform(
  Schema.Struct({
    ...CellRecord.fields,
    created_at: Schema.DateTimeUtcFromDate,
    error: RowSql.nullable(CellRecord.fields.error.from),
    role: RowSql.nullable(CellRecord.fields.role.from),
    content: RowSql.nullable(Schema.String),
    code: RowSql.nullable(Schema.String),
    query: RowSql.nullable(Schema.String),
    connector_id: RowSql.nullable(CellRecord.fields.connector_id.from),
    output: RowSql.nullable(CellRecord.fields.output.from),
    dataframe_preview: RowSql.nullable(Schema.String),
    execution_time_ms: RowSql.nullable(CellRecord.fields.execution_time_ms.from),
    reading: RowSql.nullable(CellRecord.fields.reading.from),
    trusted_source: RowSql.nullable(CellRecord.fields.trusted_source.from),
    semantic_query: RowSql.nullable(CellRecord.fields.semantic_query.from),
    based_on_cell_id: RowSql.nullable(CellId)
  }),
  Schema.typeSchema(CellRecord),
  { strict: true, decode: (row) => TrustedSchema.make(CellRecord, row), encode: (cell) => cell }
)

/**
 * A row of `<prefix>chat_assets` ↔ an `AssetRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssetFromRow = Schema.transform(
  Schema.Struct({
    ...AssetRecord.fields,
    message_cell_id: RowSql.nullable(CellId),
    storage_key: RowSql.nullable(Schema.NonEmptyString),
    content: RowSql.nullable(Schema.String),
    size_bytes: RowSql.nullable(Schema.NonNegativeInt),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(AssetRecord),
  { strict: true, decode: (row) => TrustedSchema.make(AssetRecord, row), encode: (asset) => asset }
)

const ChatKey = Schema.Struct({ organization_id: OrganizationId, id: ChatId })
const ChildKey = Schema.Struct({ organization_id: OrganizationId, chat_id: ChatId })
/** What a child write found: whether the chat exists in the organization, and how many rows it wrote. */
const WriteOutcome = Schema.Struct({ chat_found: Schema.Number, written: Schema.Number })

// Events are stored in their wire form (a JSON array per batch) and read back through the schema,
// on every answer's path: they are the service's own, so without checking them again.
const encodeEvents = TrustedSchema.encoder(Schema.Array(ChatEvent.ChatEvent))
const decodeEvent = TrustedSchema.decoder(ChatEvent.ChatEvent)

// A cell's fields as `writeCell` stores them (`chat_id` comes from the statement's chat).
const cellFields = [
  "id",
  "organization_id",
  "type",
  "status",
  "created_at",
  "error",
  "role",
  "content",
  "code",
  "query",
  "connector_id",
  "output",
  "dataframe_preview",
  "execution_time_ms",
  "reading",
  "trusted_source",
  "semantic_query",
  "based_on_cell_id"
] as const
type CellField = typeof cellFields[number]
// The cell's JSON columns, which go as their JSON text (`RowSql.values`).
const cellJsonFields: ReadonlyArray<CellField> = ["reading", "trusted_source", "semantic_query"]

/**
 * The chat repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ChatRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const read = yield* PoolRead.reader
    const compiledRead = yield* PoolRead.compiledReader
    const prefix = yield* TablePrefix
    const chats = sql(prefix.name("chats"))
    const counts = sql(prefix.name("chat_counts"))
    const messages = sql(prefix.name("chat_messages"))
    const cells = sql(prefix.name("chat_cells"))
    const assets = sql(prefix.name("chat_assets"))
    const events = sql(prefix.name("chat_events"))
    // A column of a chat's last stored batch. Ids (and runs) only grow with `first_id`, so the last
    // batch holds the log's greatest `last_id` and `run_start`: one step down the key's index,
    // where `max(...)` read every batch of the chat (at every append of a long answer).
    const lastBatch = (chatId: string, column: "last_id" | "run_start") =>
      sql`SELECT ${sql(column)} FROM ${events} WHERE chat_id = ${chatId} ORDER BY first_id DESC LIMIT 1`
    const chatColumns = sql.literal(
      "id, organization_id, creator_id, nullif(audience, '') AS audience, model, summary, source, status, " +
        "run_traceparent, connector_ids, created_at, updated_at"
    )
    const messageColumns = sql.literal(
      "id, organization_id, chat_id, role, content, cell_id, provenance, clarification, created_at"
    )
    const cellColumns = sql.literal(
      "id, organization_id, chat_id, type, status, created_at, error, role, content, code, query, connector_id, " +
        "output, dataframe_preview, execution_time_ms, reading, trusted_source, semantic_query, based_on_cell_id"
    )
    // `size_bytes` is a bigint, which `pg` returns as a string: float8 is exact for any file size.
    const assetColumns = sql.literal(
      "id, organization_id, chat_id, cell_id, message_cell_id, name, type, mime_type, storage_key, content, " +
        "size_bytes::float8 AS size_bytes, created_at"
    )

    const insertChat = SqlSchema.findOne({
      Request: ChatFromRow,
      Result: Schema.Struct({ id: ChatId }),
      execute: (row) => sql`INSERT INTO ${chats} ${sql.insert(row)} ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const findChat = (lock: "" | "FOR UPDATE") =>
      SqlSchema.findOne({
        Request: ChatKey,
        Result: ChatFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${chatColumns} FROM ${chats}
              WHERE organization_id = ${organization_id} AND id = ${id} ${sql.literal(lock)}`
      })
    const findChatById = findChat("")
    const findChatForUpdate = findChat("FOR UPDATE")
    const updateChat = SqlSchema.findOne({
      Request: ChatFromRow,
      Result: Schema.Struct({ id: ChatId }),
      execute: (row) =>
        sql`UPDATE ${chats} SET summary = ${row.summary}, status = ${row.status},
              run_traceparent = ${row.run_traceparent ?? null}, connector_ids = ${row.connector_ids ?? null},
              updated_at = ${row.updated_at}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })

    interface ListRequest {
      readonly organization_id: OrganizationId
      readonly creator_id?: MemberId | undefined
      readonly audience?: string | undefined
      readonly pattern?: string | undefined
    }
    const ownerFilter = (request: ListRequest) => [
      ...(request.creator_id === undefined ? [] : [sql`creator_id = ${request.creator_id}`]),
      ...(request.audience === undefined ? [] : [sql`audience = ${request.audience}`])
    ]
    const listFilter = (request: ListRequest) =>
      sql.and([
        sql`organization_id = ${request.organization_id}`,
        ...ownerFilter(request),
        // The same expressions as the trigram indexes, so that PostgreSQL with `pg_trgm` uses them.
        ...(request.pattern === undefined ? [] : [
          sql`(lower(summary) LIKE lower(${request.pattern}) OR lower(first_question) LIKE lower(${request.pattern}))`
        ])
      ])
    // Without a search, the counts the chats' trigger keeps (migration 12) answer from one row per
    // creator; a search has to look at the chats themselves.
    const listTotal = (request: ListRequest) =>
      request.pattern === undefined
        ? sql`SELECT coalesce(sum(n), 0)::int AS total FROM ${counts} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...ownerFilter(request)
          ])
        }`
        : sql`SELECT count(*)::int AS total FROM ${chats} WHERE ${listFilter(request)}`
    // Rows of its own table, read on every listing: decoded straight to the record, without
    // checking them again (its decoder reads only the chat's own columns of the row).
    const decodeChat = TrustedSchema.decoder(ChatFromRow)
    // A page of chats and their total in one statement, so both come from one snapshot: as two, a
    // chat started between them was counted but missing from the page. The total is the row that is
    // always there and the page joins it (no chat: one row of nulls): a join `ON true` is a nested
    // loop, which keeps the page's index order. One compiled read per shape of the listing (its
    // sort, and which filters it has); the values (the organization, the creator, the audience, the
    // pattern, the page) are its parameters.
    const makePageRead = (sort: string, creator: boolean, audience: boolean, search: boolean) =>
      compiledRead((
        organizationId: OrganizationId,
        creatorId: MemberId | undefined,
        audienceOf: string | undefined,
        pattern: string | undefined,
        limit: number,
        offset: number
      ) => {
        const request: ListRequest = {
          organization_id: organizationId,
          ...(creator ? { creator_id: creatorId } : {}),
          ...(audience ? { audience: audienceOf } : {}),
          ...(search ? { pattern } : {})
        }
        return sql<{ readonly total: number; readonly id: string | null; readonly preview: string }>`
          SELECT page.*, counted.total
          FROM (${listTotal(request)}) AS counted
          LEFT JOIN LATERAL (
            SELECT ${chatColumns}, left(coalesce(first_question, ''), 200) AS preview
            FROM ${chats} WHERE ${listFilter(request)}
            ORDER BY ${sql.literal(sort)}
            LIMIT ${limit} OFFSET ${offset}
          ) AS page ON true`
      })
    const pageReads = new Map<string, ReturnType<typeof makePageRead>>()
    const pageRead = (
      page: Pick<ChatRepo.ListOptions, "sortBy" | "sortDirection">,
      creator: boolean,
      audience: boolean,
      search: boolean
    ) => {
      // The expressions of the sort indexes; ties by id in the same direction.
      const key = page.sortBy === "name" ? `lower(summary) COLLATE "C"` : page.sortBy
      const direction = page.sortDirection === "asc" ? "ASC" : "DESC"
      const sort = `${key} ${direction}, id ${direction}`
      const shape = `${sort}${creator ? " creator" : ""}${audience ? " audience" : ""}${search ? " search" : ""}`
      let run = pageReads.get(shape)
      if (run === undefined) {
        run = makePageRead(sort, creator, audience, search)
        pageReads.set(shape, run)
      }
      return run
    }
    const listPage = (
      request: ListRequest,
      page: Pick<ChatRepo.ListOptions, "sortBy" | "sortDirection" | "limit" | "offset">
    ) =>
      Effect.map(
        pageRead(page, request.creator_id !== undefined, request.audience !== undefined, request.pattern !== undefined)(
          request.organization_id,
          request.creator_id,
          request.audience,
          request.pattern,
          page.limit,
          page.offset
        ),
        (rows) => ({
          rows: rows.filter((row) => row.id !== null).map((row) => ({ chat: decodeChat(row), preview: row.preview })),
          total: rows[0]?.total ?? 0
        })
      )

    // The chat row is locked first, so that messages of one chat get their `seq` in the order their
    // transactions append them, and `first_question` is the first user message in that order.
    const appendMessage = SqlSchema.single({
      Request: MessageFromRow,
      Result: WriteOutcome,
      execute: (m) =>
        sql`WITH chat AS (
              SELECT id FROM ${chats} WHERE organization_id = ${m.organization_id} AND id = ${m.chat_id}
              FOR NO KEY UPDATE
            ), inserted AS (
              INSERT INTO ${messages}
                (id, organization_id, chat_id, role, content, cell_id, provenance, clarification, created_at)
              SELECT ${m.id}::uuid, ${m.organization_id}::uuid, chat.id, ${m.role}::text, ${m.content}::text,
                     ${m.cell_id}::uuid, ${provenanceText(m)}::jsonb, ${clarificationText(m)}::jsonb,
                     ${m.created_at}::timestamptz
              FROM chat
              ON CONFLICT (id) DO NOTHING
              RETURNING role, content
            ), first AS (
              UPDATE ${chats} SET first_question = inserted.content FROM inserted
              WHERE organization_id = ${m.organization_id} AND id = ${m.chat_id}
                AND inserted.role = 'user' AND first_question IS NULL
            )
            SELECT (SELECT count(*)::int FROM chat) AS chat_found, (SELECT count(*)::int FROM inserted) AS written`
    })
    // Stores a cell, or replaces this chat's cell with its id (`seq` is left alone, so the cell keeps
    // its place): the insert of `upsertCell` and `completeRun`, whose chat comes from a CTE. `c` holds
    // the cell's values as `RowSql.values` gives them (JSON columns as text): a compiled statement's
    // arguments are stand-ins, which must not shape its text.
    const writeCell = (c: { readonly [K in CellField]?: unknown }, chatId: string, from: string) =>
      sql`INSERT INTO ${cells} AS cell (${cellColumns})
          SELECT ${c.id}::uuid, ${c.organization_id}::uuid, ${sql.literal(chatId)}, ${c.type}::text,
                 ${c.status}::text, ${c.created_at}::timestamptz, ${c.error ?? null}::text, ${c.role ?? null}::text,
                 ${c.content ?? null}::text, ${c.code ?? null}::text, ${c.query ?? null}::text,
                 ${c.connector_id ?? null}::integer, ${c.output ?? null}::text[],
                 ${c.dataframe_preview ?? null}::text, ${c.execution_time_ms ?? null}::integer,
                 ${c.reading ?? null}::text::jsonb, ${c.trusted_source ?? null}::text::jsonb,
                 ${c.semantic_query ?? null}::text::jsonb, ${c.based_on_cell_id ?? null}::uuid
          FROM ${sql.literal(from)}
          ON CONFLICT (id) DO UPDATE SET
            type = excluded.type, status = excluded.status, created_at = excluded.created_at,
            error = excluded.error, role = excluded.role, content = excluded.content, code = excluded.code,
            query = excluded.query, connector_id = excluded.connector_id, output = excluded.output,
            dataframe_preview = excluded.dataframe_preview, execution_time_ms = excluded.execution_time_ms,
            reading = excluded.reading, trusted_source = excluded.trusted_source,
            semantic_query = excluded.semantic_query, based_on_cell_id = excluded.based_on_cell_id
          WHERE cell.organization_id = excluded.organization_id AND cell.chat_id = excluded.chat_id`

    // A batch of a run's events, appended right after the log's last event, while the chat is running
    // and no newer run has written to the log. On every batch of every answer: compiled once.
    const appendBatch = compiledRead((
      organizationId: string,
      chatId: string,
      firstId: number,
      lastId: number,
      runStart: number,
      logged: string
    ) =>
      sql<{ one: number }>`WITH chat AS (
          SELECT id FROM ${chats}
          WHERE organization_id = ${organizationId} AND id = ${chatId} AND status = 'running'
          FOR SHARE
        ), log AS (
          SELECT coalesce((${lastBatch(chatId, "last_id")}), 0) AS last,
                 coalesce((${lastBatch(chatId, "run_start")}), 0) AS run
        )
        INSERT INTO ${events} (organization_id, chat_id, first_id, last_id, run_start, events)
        SELECT ${organizationId}::uuid, chat.id, ${firstId}::int, ${lastId}::int, ${runStart}::int, ${logged}::jsonb
        FROM chat, log
        WHERE log.last + 1 = ${firstId} AND log.run <= ${runStart}
        ON CONFLICT (chat_id, first_id) DO NOTHING
        RETURNING 1 AS one`
    )
    // The end of every answer in one statement (the `done` event waits on it). The chat row is
    // locked and re-checked (still running, this run's question the latest); the `done` event goes
    // into the log only then, the message only with it, and the cell and the chat's end only with
    // the message, so a run that is no longer current, or an answer stored twice, writes nothing.
    // The chat's end names the chat by its key: joined to the message's CTE instead, PostgreSQL
    // planned a scan of the organization's chats whenever its statistics were stale.
    // Compiled once (`compiledRead`): the statement is 3 KB of text, which compiling again, and `pg`
    // hashing again to find its prepared statement, cost 0.05–0.1 ms before every answer's `done`.
    // Positional, as a compiled statement's arguments are; the cell's come last, by field.
    const completeRunStatement = compiledRead((
      organizationId: string,
      chatId: string,
      userMessageId: string,
      at: Date,
      runStart: number,
      first: number | null,
      count: number,
      logged: string,
      messageId: string,
      role: string,
      content: string,
      messageCellId: string,
      provenance: string | null,
      clarification: string | null,
      messageCreatedAt: Date,
      ...cell: ReadonlyArray<unknown>
    ) =>
      sql<{ readonly written: number; readonly done_id: number | null }>`WITH chat AS (
          SELECT id FROM ${chats}
          WHERE organization_id = ${organizationId} AND id = ${chatId} AND status = 'running'
            AND (SELECT id FROM ${messages}
                 WHERE organization_id = ${organizationId} AND chat_id = ${chatId} AND role = 'user'
                 ORDER BY seq DESC LIMIT 1) = ${userMessageId}::uuid
          FOR NO KEY UPDATE
        ), log AS (
          SELECT coalesce((${lastBatch(chatId, "last_id")}), 0) + 1 AS next
        ), logged AS (
          INSERT INTO ${events} (organization_id, chat_id, first_id, last_id, run_start, events)
          SELECT ${organizationId}::uuid, chat.id, log.next, log.next + ${count}::int, ${runStart}::int,
                 ${logged}::jsonb
          FROM chat, log
          WHERE ${first}::int IS NULL OR log.next = ${first}::int
          ON CONFLICT (chat_id, first_id) DO NOTHING
          RETURNING last_id
        ), message AS (
          INSERT INTO ${messages}
            (id, organization_id, chat_id, role, content, cell_id, provenance, clarification, created_at)
          SELECT ${messageId}::uuid, ${organizationId}::uuid, chat.id, ${role}::text, ${content}::text,
                 ${messageCellId}::uuid, ${provenance}::jsonb, ${clarification}::jsonb,
                 ${messageCreatedAt}::timestamptz
          FROM chat, logged
          ON CONFLICT (id) DO NOTHING
          RETURNING chat_id
        ), cell AS (
          ${writeCell(Object.fromEntries(cellFields.map((field, i) => [field, cell[i]])), "message.chat_id", "message")}
        ), finished AS (
          UPDATE ${chats} SET status = 'completed', updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${chatId} AND EXISTS (SELECT FROM message)
          RETURNING 1
        )
        SELECT (SELECT count(*)::int FROM finished) AS written, (SELECT last_id FROM logged) AS done_id`
    )
    const completeRun = RowSql.trustedSingle({
      Request: Schema.Struct({
        message: MessageFromRow,
        cell: CellFromRow,
        user_message_id: Schema.String,
        at: Schema.DateTimeUtcFromDate,
        run_start: Schema.Int,
        // The id the first event must take (the log's next), or null when only `done` is written.
        first: Schema.NullOr(Schema.Int),
        count: Schema.Int,
        events: Schema.String
      }),
      Result: Schema.Struct({ written: Schema.Number, done_id: Schema.NullOr(Schema.Number) }),
      execute: ({ at, cell, count, events: logged, first, message: m, run_start, user_message_id }) =>
        completeRunStatement(
          m.organization_id,
          m.chat_id,
          user_message_id,
          at,
          run_start,
          first,
          count,
          logged,
          m.id,
          m.role,
          m.content,
          m.cell_id,
          provenanceText(m),
          clarificationText(m),
          m.created_at,
          ...Object.values(RowSql.values(cell, cellFields, cellJsonFields))
        )
    })
    // A chat's messages, cells and assets: what every read of a chat (the console's) takes, decoded
    // without checking the service's own rows again.
    const findMessages = RowSql.trustedAll({
      Request: ChildKey,
      Result: MessageFromRow,
      execute: ({ chat_id, organization_id }) =>
        read(sql`SELECT ${messageColumns} FROM ${messages}
            WHERE organization_id = ${organization_id} AND chat_id = ${chat_id} ORDER BY seq`)
    })

    // An existing id is replaced only when it is this chat's cell (of this organization); otherwise
    // nothing is written, which is the `Conflict`. `seq` is left alone, so the cell keeps its place.
    const upsertCell = SqlSchema.single({
      Request: CellFromRow,
      Result: WriteOutcome,
      execute: (c) =>
        sql`WITH chat AS (
              SELECT id FROM ${chats} WHERE organization_id = ${c.organization_id} AND id = ${c.chat_id}
            ), written AS (
              ${writeCell(RowSql.values(c, cellFields, cellJsonFields), "chat.id", "chat")}
              RETURNING 1
            )
            SELECT (SELECT count(*)::int FROM chat) AS chat_found, (SELECT count(*)::int FROM written) AS written`
    })
    const findCells = RowSql.trustedAll({
      Request: Schema.Struct({ ...ChildKey.fields, limit: Schema.Int, offset: Schema.Int }),
      Result: CellFromRow,
      execute: ({ chat_id, limit, offset, organization_id }) =>
        read(sql`SELECT ${cellColumns} FROM ${cells}
            WHERE organization_id = ${organization_id} AND chat_id = ${chat_id}
            ORDER BY created_at DESC, seq DESC LIMIT ${limit} OFFSET ${offset}`)
    })
    const findCell = SqlSchema.findOne({
      Request: Schema.Struct({ ...ChildKey.fields, id: CellId }),
      Result: CellFromRow,
      execute: ({ chat_id, id, organization_id }) =>
        sql`SELECT ${cellColumns} FROM ${cells}
            WHERE organization_id = ${organization_id} AND chat_id = ${chat_id} AND id = ${id}`
    })

    const addAsset = SqlSchema.single({
      Request: AssetFromRow,
      Result: WriteOutcome,
      execute: (a) =>
        sql`WITH chat AS (
              SELECT id FROM ${chats} WHERE organization_id = ${a.organization_id} AND id = ${a.chat_id}
            ), inserted AS (
              INSERT INTO ${assets} (id, organization_id, chat_id, cell_id, message_cell_id, name, type, mime_type,
                                     storage_key, content, size_bytes, created_at)
              SELECT ${a.id}::uuid, ${a.organization_id}::uuid, chat.id, ${a.cell_id}::uuid,
                     ${a.message_cell_id ?? null}::uuid, ${a.name}::text, ${a.type}::text, ${a.mime_type}::text,
                     ${a.storage_key ?? null}::text, ${a.content ?? null}::text, ${a.size_bytes ?? null}::bigint,
                     ${a.created_at}::timestamptz
              FROM chat
              ON CONFLICT (id) DO NOTHING
              RETURNING 1
            )
            SELECT (SELECT count(*)::int FROM chat) AS chat_found, (SELECT count(*)::int FROM inserted) AS written`
    })
    const findAssets = RowSql.trustedAll({
      Request: ChildKey,
      Result: AssetFromRow,
      execute: ({ chat_id, organization_id }) =>
        read(sql`SELECT ${assetColumns} FROM ${assets}
            WHERE organization_id = ${organization_id} AND chat_id = ${chat_id} ORDER BY created_at, seq`)
    })
    const findAssetsOf = RowSql.trustedAll({
      Request: Schema.Struct({ ...ChildKey.fields, message_cell_ids: Schema.Array(CellId) }),
      Result: AssetFromRow,
      execute: ({ chat_id, message_cell_ids, organization_id }) =>
        read(sql`SELECT ${assetColumns} FROM ${assets}
            WHERE organization_id = ${organization_id} AND chat_id = ${chat_id}
              AND message_cell_id IN ${sql.in(message_cell_ids)}
            ORDER BY created_at, seq`)
    })
    const findAsset = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, id: AssetId }),
      Result: AssetFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${assetColumns} FROM ${assets} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    // The one read not scoped by organization (a signed URL carries no bearer token); by primary key.
    const findAssetAnywhere = SqlSchema.findOne({
      Request: AssetId,
      Result: AssetFromRow,
      execute: (id) => sql`SELECT ${assetColumns} FROM ${assets} WHERE id = ${id}`
    })

    const chatNotFound = (id: ChatId) => new NotFound({ message: `chat ${id} not found` })
    const outcome = (
      chatId: ChatId,
      conflict: () => Conflict
    ) =>
    (result: typeof WriteOutcome.Type): Effect.Effect<void, NotFound | Conflict> =>
      result.chat_found === 0
        ? Effect.fail(chatNotFound(chatId))
        : result.written === 0
        ? Effect.fail(conflict())
        : Effect.void

    return ChatRepo.of({
      create: Traced.fn("ChatRepoSql.create")((chat) =>
        Effect.flatMap(
          Effect.orDie(insertChat(chat)),
          Option.match({
            onNone: () => Effect.fail(new Conflict({ message: `chat ${chat.id} already exists` })),
            onSome: () => Effect.void
          })
        )
      ),
      get: Traced.fn("ChatRepoSql.get")((organizationId, id) =>
        Effect.orDie(findChatById({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("ChatRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(findChatForUpdate({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("ChatRepoSql.list")(function*(organizationId: OrganizationId, options: ChatRepo.ListOptions) {
        const term = options.searchTerm ?? ""
        const { rows, total } = yield* Effect.orDie(listPage({
          organization_id: organizationId,
          ...(options.creatorId === undefined ? {} : { creator_id: options.creatorId }),
          ...(options.audience === undefined ? {} : { audience: options.audience }),
          ...(term === "" ? {} : { pattern: likeContaining(term) })
        }, options))
        return { rows, totalCount: total }
      }),
      // Messages, cells, assets and events go with their chat (foreign keys with ON DELETE CASCADE),
      // and the creator's count with its trigger, in the one statement.
      deleteMany: Traced.fn("ChatRepoSql.deleteMany")((organizationId, owner) =>
        Effect.orDie(
          Effect.map(
            sql<{ readonly id: ChatId }>`DELETE FROM ${chats} WHERE ${
              sql.and([
                sql`organization_id = ${organizationId}`,
                sql`creator_id = ${owner.creatorId}`,
                sql`coalesce(audience, '') = ${owner.audience}`
              ])
            } RETURNING id`,
            (rows) => rows.map((row) => row.id)
          )
        )
      ),
      update: Traced.fn("ChatRepoSql.update")((chat) =>
        Effect.flatMap(
          Effect.orDie(updateChat(chat)),
          Option.match({ onNone: () => Effect.fail(chatNotFound(chat.id)), onSome: () => Effect.void })
        )
      ),

      completeRun: Traced.fn("ChatRepoSql.completeRun")((
        { at, cell, done, events: pending, message, runStart, userMessageId }
      ) =>
        Effect.map(
          Effect.orDie(completeRun({
            message,
            cell,
            user_message_id: userMessageId,
            at,
            run_start: runStart,
            first: pending.length === 0 ? null : pending[0]!.id,
            count: pending.length,
            // One batch: the events not yet logged, then `done`.
            events: JSON.stringify(encodeEvents([...pending.map((e) => e.event), done]))
          })),
          (result) => result.written === 1 && result.done_id !== null ? Option.some(result.done_id) : Option.none()
        )
      ),

      // The event log is on every answer's path (each stored batch, each heartbeat, each follower's
      // read): plain statements, without spans or row schemas.
      appendEvents: ({ chatId, events: batch, organizationId, runStart }) =>
        Effect.map(
          Effect.orDie(appendBatch(
            organizationId,
            chatId,
            batch[0].id,
            batch[batch.length - 1]!.id,
            runStart,
            JSON.stringify(encodeEvents(batch.map((e) => e.event)))
          )),
          (rows) => rows.length === 1
        ),
      latestRun: (organizationId, chatId) =>
        Effect.map(
          Effect.orDie(sql<{ start: number | null; last: number | null }>`
            SELECT run_start AS start, last_id AS last FROM ${events}
            WHERE organization_id = ${organizationId} AND chat_id = ${chatId}
            ORDER BY first_id DESC LIMIT 1`),
          ([row]) =>
            row === undefined || row.start === null || row.last === null
              ? Option.none()
              : Option.some({ start: row.start, last: row.last })
        ),
      // From the batch that holds the event after `after` (found by one step down the key's index),
      // not from the chat's first batch: a follower reads a long answer a batch at a time.
      readEvents: (organizationId, chatId, runStart, after) =>
        Effect.map(
          Effect.orDie(sql<{ first_id: number; events: ReadonlyArray<unknown> }>`
            SELECT first_id, events FROM ${events}
            WHERE organization_id = ${organizationId} AND chat_id = ${chatId} AND run_start = ${runStart}
              AND last_id > ${after}
              AND first_id >= coalesce(
                (SELECT max(first_id) FROM ${events} WHERE chat_id = ${chatId} AND first_id <= ${after}), 0)
            ORDER BY first_id`),
          (rows) =>
            rows.flatMap((row) =>
              row.events.flatMap((event, i) =>
                row.first_id + i > after ? [{ id: row.first_id + i, event: decodeEvent(event) }] : []
              )
            )
        ),
      heartbeat: ({ at, chatId, organizationId, runStart }) =>
        Effect.map(
          Effect.orDie(sql<{ one: number }>`
            UPDATE ${chats} SET updated_at = ${DateTime.toDate(at)}
            WHERE organization_id = ${organizationId} AND id = ${chatId} AND status = 'running'
              AND (${lastBatch(chatId, "run_start")}) = ${runStart}
            RETURNING 1 AS one`),
          (rows) => rows.length === 1
        ),
      appendMessage: Traced.fn("ChatRepoSql.appendMessage")((message) =>
        Effect.flatMap(
          Effect.orDie(appendMessage(message)),
          outcome(message.chat_id, () => new Conflict({ message: `message ${message.id} already exists` }))
        )
      ),
      listMessages: Traced.fn("ChatRepoSql.listMessages")((organizationId, chatId) =>
        Effect.orDie(findMessages({ organization_id: organizationId, chat_id: chatId }))
      ),

      upsertCell: Traced.fn("ChatRepoSql.upsertCell")((cell) =>
        Effect.flatMap(
          Effect.orDie(upsertCell(cell)),
          outcome(cell.chat_id, () => new Conflict({ message: `cell ${cell.id} belongs to another chat` }))
        )
      ),
      listCells: Traced.fn("ChatRepoSql.listCells")(function*(
        organizationId: OrganizationId,
        chatId: ChatId,
        page: ChatRepo.CellPageRequest
      ) {
        // One row more than asked says whether more follow, without counting them all.
        const rows = yield* Effect.orDie(
          findCells({ organization_id: organizationId, chat_id: chatId, limit: page.limit + 1, offset: page.offset })
        )
        return { cells: rows.slice(0, page.limit), hasMore: rows.length > page.limit }
      }),
      getCell: Traced.fn("ChatRepoSql.getCell")((organizationId, chatId, cellId) =>
        Effect.orDie(findCell({ organization_id: organizationId, chat_id: chatId, id: cellId }))
      ),

      addAsset: Traced.fn("ChatRepoSql.addAsset")((asset) =>
        Effect.flatMap(
          Effect.orDie(addAsset(asset)),
          outcome(asset.chat_id, () => new Conflict({ message: `asset ${asset.id} already exists` }))
        )
      ),
      listAssets: Traced.fn("ChatRepoSql.listAssets")((organizationId, chatId, messageCellIds) =>
        messageCellIds === undefined
          ? Effect.orDie(findAssets({ organization_id: organizationId, chat_id: chatId }))
          : messageCellIds.length === 0
          ? Effect.succeed([])
          : Effect.orDie(
            findAssetsOf({ organization_id: organizationId, chat_id: chatId, message_cell_ids: messageCellIds })
          )
      ),
      getAsset: Traced.fn("ChatRepoSql.getAsset")((organizationId, id) =>
        Effect.orDie(findAsset({ organization_id: organizationId, id }))
      ),
      findAssetForSignedUrl: Traced.fn("ChatRepoSql.findAssetForSignedUrl")((id) => Effect.orDie(findAssetAnywhere(id)))
    })
  }
)

/**
 * `ChatRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ChatRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(ChatRepo, make)

/**
 * The tools of the MCP server: each is an Effect schema for its arguments (its JSON Schema is
 * derived), and a handler that calls the use case of the endpoint it mirrors, as the caller, so the
 * policy engine, the caller's roles and its key's row-level security apply as on `/v2`.
 *
 * @internal
 */
import type { CallToolResult } from "@modelcontextprotocol/server"
import * as Answers from "@sightline/core/Answers"
import { ChartRenderer } from "@sightline/core/ChartRenderer"
import * as ChartSpec from "@sightline/core/ChartSpec"
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import * as Connectors from "@sightline/core/Connectors"
import * as Dashboard from "@sightline/core/Dashboard"
import * as Dashboards from "@sightline/core/Dashboards"
import { type ChatId, ConnectorId, PlaybookId } from "@sightline/core/Ids"
import * as Investigation from "@sightline/core/Investigation"
import * as Investigations from "@sightline/core/Investigations"
import { Library } from "@sightline/core/Library"
import type * as OAuth from "@sightline/core/OAuth"
import * as Playbook from "@sightline/core/Playbook"
import * as PlaybookRuns from "@sightline/core/PlaybookRuns"
import * as Playbooks from "@sightline/core/Playbooks"
import type * as Policy from "@sightline/core/Policy"
import * as Secret from "@sightline/core/Secret"
import * as SemanticLayer from "@sightline/core/SemanticLayer"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as SqlQueries from "@sightline/core/SqlQueries"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AssetUrls } from "../AssetUrls.js"

/** What a tool answers: a JSON value, shown to the model as text and given to clients as structured content. */
export type Structured = Record<string, unknown>

/** A content block of a tool's result beside its JSON (an image, an embedded resource). */
export type Content = CallToolResult["content"][number]

/** A result with content blocks beside its JSON. */
export class Rich {
  constructor(readonly structured: Structured, readonly content: ReadonlyArray<Content>) {}
}

/** Reports what a running tool is doing, to a caller that asked for progress (a no-op otherwise). */
export type Progress = (message: string) => Effect.Effect<void>

/** A tool of the server. */
export interface Tool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly arguments: Schema.Schema<any, any>
  readonly readOnly: boolean
  /** The OAuth scope a grant needs to list and call it. */
  readonly scope: OAuth.Scope
  /** Whether the caller's organization offers the tool (listed only then); always when absent. */
  readonly available?: (principal: Policy.Principal) => Effect.Effect<boolean>
  readonly call: (
    principal: Policy.Principal,
    args: any,
    progress: Progress
  ) => Effect.Effect<Structured | Rich, { readonly message: string }>
}

/** The JSON Schema of a tool's arguments, as MCP wants it: an object, inline (no `$ref`s). */
export const inputSchema = (tool: Tool): Record<string, unknown> => {
  const { $defs, $schema: _, ...schema } = JSONSchema.make(tool.arguments, { target: "jsonSchema2020-12" }) as any
  if ($defs === undefined) return schema
  // Inline the definitions: some clients do not resolve references.
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline)
    if (typeof value !== "object" || value === null) return value
    const ref = (value as { $ref?: string }).$ref
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) return inline($defs[ref.slice("#/$defs/".length)])
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inline(inner)]))
  }
  return inline(schema) as Record<string, unknown>
}

// Effect's JSON Schema for `{}` is "any object or array"; MCP wants an object of no properties.
const NoArguments = Schema.Struct({}).annotations({
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})

const DescribeData = Schema.Struct({
  connector_id: ConnectorId.annotations({ description: "The connector, from list_connectors" })
})

const Ask = Schema.Struct({
  question: Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(10_000)).annotations({
      description: "The question, in the caller's words (or choice, to answer a clarification)"
    })
  ),
  connector_ids: Schema.optional(
    Schema.Array(ConnectorId).annotations({ description: "The connectors to answer from (list_connectors)" })
  ),
  chat_id: Schema.optional(
    Schema.UUID.annotations({ description: "Continue this chat (a previous ask's chat_id) instead of a new one" })
  ),
  choice: Schema.optional(
    Schema.NonEmptyTrimmedString.annotations({
      description: "When the previous ask of chat_id answered with a clarification: the id of the choice meant"
    })
  )
}).pipe(
  Schema.filter((args) =>
    args.choice === undefined
      ? args.question !== undefined || "give the question"
      : args.question === undefined && args.chat_id !== undefined ||
        "choice answers the clarification of chat_id: send it with chat_id and without question"
  )
)

const ListPlaybooks = Schema.Struct({
  search_term: Schema.optional(Schema.String.annotations({ description: "Part of a playbook's name or prompt" }))
})

const RunPlaybook = Schema.Struct({
  playbook_id: PlaybookId.annotations({ description: "The playbook, from list_playbooks" }),
  dry_run: Schema.optional(Schema.Boolean.annotations({ description: "Only check that it could run" }))
})

const SearchLibrary = Schema.Struct({
  query: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
    description: "Words to find in the paths and contents of the Context Library's files (case-insensitive)"
  })
})

const ReadLibraryFile = Schema.Struct({
  path: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1_000)).annotations({
    description: "A path from search_library, such as semantic/demo.yaml"
  })
})

/** The rows of a page of `query_metrics` and `run_verified_query` (`run_sql`'s is its `max_rows`). */
export const pageRows = 100

// A continuation token: where the next page starts, and a fingerprint of the arguments it continues,
// so a token cannot page a different query. Nothing is kept on the server: the next page runs the
// statement again (any process answers it), and the caller's access is checked again.
const PageCursor = Schema.compose(
  Schema.StringFromBase64Url,
  Schema.parseJson(Schema.Struct({ offset: Schema.NonNegativeInt, of: Schema.String }))
)
const decodeCursor = Schema.decodeUnknownOption(PageCursor)
const encodeCursor = Schema.encodeSync(PageCursor)
const fingerprint = (args: unknown) => Effect.map(Secret.sha256Hex(JSON.stringify(args)), (hash) => hash.slice(0, 16))

interface Rows {
  readonly rows: ReadonlyArray<unknown>
  readonly truncated: boolean
}

/**
 * A tool whose result is paged: its arguments take a `cursor` (a previous page's `next_cursor`, with
 * the same other arguments), and its result a `next_cursor` while rows follow. Pages end at
 * `ConnectorRuntime.defaultMaxRows`, as every query does.
 */
const paged = <F extends Schema.Struct.Fields, R extends Rows>(
  base: Schema.Struct<F>,
  rowsOf: (args: Schema.Struct.Type<F>) => number,
  run: (
    principal: Policy.Principal,
    args: Schema.Struct.Type<F>,
    window: ConnectorRuntime.Window
  ) => Effect.Effect<R, { readonly message: string }>
) => ({
  arguments: Schema.Struct({
    ...base.fields,
    cursor: Schema.optional(Schema.String.annotations({
      description: "A previous result's next_cursor, to get its next page (send the same other arguments)"
    }))
  }),
  call: (principal: Policy.Principal, { cursor, ...args }: Schema.Struct.Type<F> & { readonly cursor?: string }) =>
    Effect.gen(function*() {
      const of = yield* fingerprint(args)
      const offset = cursor === undefined ? 0 : Option.getOrUndefined(
        Option.filter(decodeCursor(cursor), (decoded) => decoded.of === of)
      )?.offset
      if (offset === undefined) return yield* Effect.fail({ message: "cursor: not a cursor of these arguments" })
      const window = { offset, rows: rowsOf(args as Schema.Struct.Type<F>) }
      const page = yield* run(principal, args as Schema.Struct.Type<F>, window)
      const next = offset + page.rows.length
      return {
        ...page,
        ...(page.truncated && page.rows.length > 0 && next < ConnectorRuntime.defaultMaxRows
          ? { next_cursor: encodeCursor({ offset: next, of }) }
          : {})
      } as Structured
    })
})

const QueryDashboard = Schema.Struct({
  name: Dashboard.Name.annotations({ description: "The dashboard's name, as list_dashboards gives it" }),
  ...Dashboard.QueryRequest.fields
})

/** The most files `search_library` names, and the matching lines it shows of each. */
const searchLimits = { files: 20, lines: 3 }

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** The tools, over the use cases they call. */
export const make = Effect.gen(function*() {
  const connectors = yield* Connectors.Connectors
  const semantic = yield* SemanticLayer.SemanticLayer
  const investigations = yield* Investigations.Investigations
  const dashboards = yield* Dashboards.Dashboards
  const answers = yield* Answers.Answers
  const sql = yield* SqlQueries.SqlQueries
  const playbooks = yield* Playbooks.Playbooks
  const runs = yield* PlaybookRuns.PlaybookRuns
  const library = yield* Library
  const listQuery = Schema.decodeUnknownSync(Playbook.ListPlaybooksQuery)
  const { sign } = yield* AssetUrls
  const encodeModel = Schema.encode(SemanticModel.SemanticModelFile)
  const renderer = yield* Effect.serviceOption(ChartRenderer)
  // A chart as an image where the deployment renders charts; else its Vega-Lite spec, which a client
  // that draws charts can show.
  const chartContent = (chatId: string, chart: { readonly title: string; readonly spec: string }) =>
    Effect.gen(function*() {
      const spec: Content = {
        type: "resource",
        resource: { uri: `sightline://chats/${chatId}/chart`, mimeType: ChartSpec.mimeType, text: chart.spec }
      }
      if (Option.isNone(renderer)) return spec
      const png = yield* Effect.either(Effect.suspend(() => renderer.value.png(JSON.parse(chart.spec))))
      if (png._tag === "Left") return spec
      return { type: "image", data: Buffer.from(png.right).toString("base64"), mimeType: "image/png" } as Content
    })
  const tools: ReadonlyArray<Tool> = [
    {
      name: "list_connectors",
      title: "List connectors",
      description: "The data connectors the caller may use: their ids, names and types.",
      arguments: NoArguments,
      readOnly: true,
      scope: "read",
      call: (principal) =>
        Effect.map(connectors.list(principal), (listed) => ({
          connectors: listed.map((connector) => ({ id: connector.id, name: connector.name, type: connector.type }))
        }))
    },
    {
      name: "describe_data",
      title: "Describe a connector's data",
      description: "The semantic model of a connector: its tables, dimensions, metrics and verified queries, " +
        "as the caller may see them. Use its metric and dimension names with query_metrics.",
      arguments: DescribeData,
      readOnly: true,
      scope: "read",
      call: (principal, args: typeof DescribeData.Type) =>
        Effect.gen(function*() {
          const { file, source } = yield* semantic.modelFile(principal, args.connector_id)
          return { source, model: yield* Effect.orDie(encodeModel(file)) }
        })
    },
    {
      name: "query_metrics",
      title: "Query metrics",
      description: "Runs a semantic query (metrics by dimensions, a time range, filters, segments) read-only, " +
        "with the caller's row-level security, and answers its rows, its SQL and how it was read.",
      readOnly: true,
      scope: "query",
      ...paged(
        SemanticQuery.SemanticQueryRequest,
        () => pageRows,
        (principal, args, window) =>
          Effect.flatMap(
            semantic.query(principal, args, window),
            (result) => Effect.orDie(Schema.encode(SemanticQuery.SemanticQueryResult)(result))
          )
      )
    },
    {
      name: "investigate",
      title: "Investigate a change",
      description: "Finds where a metric changed between two periods (compared_with, usually the period before), " +
        "or where its total comes from (no compared_with): the totals, each driver dimension's parts of the " +
        "change (a ratio's split into rate and mix), and the top contributor one level deeper, each step a " +
        "semantic query with the caller's row-level security. Its summary says where the change is, never why.",
      arguments: Investigation.InvestigationRequest,
      readOnly: true,
      scope: "query",
      call: (principal, args: typeof Investigation.InvestigationRequest.Type) =>
        investigations.investigate(principal, args)
    },
    {
      name: "list_dashboards",
      title: "List dashboards",
      description: "The dashboards of the Context Library the caller may read: their names, titles, connector " +
        "and number of tiles. Run one with query_dashboard.",
      arguments: NoArguments,
      readOnly: true,
      scope: "read",
      call: (principal) =>
        Effect.flatMap(
          dashboards.list(principal),
          (listed) => Effect.orDie(Schema.encode(Dashboard.ListResponse)(listed))
        )
    },
    {
      name: "query_dashboard",
      title: "Query a dashboard",
      description: "Runs a dashboard's tiles with the caller's row-level security, optionally under other values " +
        "of its shared filters, and answers each tile's rows (the first 100), how its query was read, and which " +
        "reviewed definition vouches for it. A tile that fails says why; the others are answered.",
      arguments: QueryDashboard,
      readOnly: true,
      scope: "query",
      call: (principal, args: typeof QueryDashboard.Type) =>
        Effect.flatMap(
          dashboards.query(principal, args.name, args.filters === undefined ? {} : { filters: args.filters }),
          (result) =>
            Effect.orDie(
              Schema.encode(Dashboard.QueryResponse)({
                ...result,
                // A model reads rows, not drawings: the charts stay with the REST answer, and long tables are cut.
                tiles: result.tiles.map(({ chart: _, ...tile }) => ({
                  ...tile,
                  rows: tile.rows.slice(0, pageRows),
                  truncated: tile.truncated || tile.rows.length > pageRows
                }))
              })
            )
        )
    },
    {
      name: "run_verified_query",
      title: "Run a verified query",
      description: "Runs a verified query (a question with SQL the organization checked, listed by describe_data) " +
        "with values for its parameters, read-only and with the caller's row-level security. Prefer it to run_sql " +
        "when one answers the question: its result says which definition vouches for it.",
      readOnly: true,
      scope: "query",
      ...paged(
        SemanticQuery.VerifiedQueryRequest,
        () => pageRows,
        (principal, args, window) =>
          Effect.flatMap(
            semantic.runVerified(principal, args, window),
            (result) => Effect.orDie(Schema.encode(SemanticQuery.VerifiedQueryResult)(result))
          )
      )
    },
    {
      name: "run_sql",
      title: "Run SQL",
      description: "Runs one read-only SQL statement on a connector, with the caller's row-level security, and " +
        "answers its columns and rows (at most max_rows; truncated says when there were more).",
      readOnly: true,
      scope: "query",
      available: sql.enabled,
      ...paged(
        SqlQueries.RunSqlRequest,
        (args) => args.max_rows ?? SqlQueries.defaultPageRows,
        (principal, args, window) => sql.run(principal, args, window.offset)
      )
    },
    {
      name: "search_library",
      title: "Search the Context Library",
      description: "Finds the Context Library's files (saved queries, notes, semantic models) whose path or " +
        "content holds the words, among those the caller may read, with the matching lines.",
      arguments: SearchLibrary,
      readOnly: true,
      scope: "read",
      call: (principal, args: typeof SearchLibrary.Type) =>
        Effect.map(Effect.orDie(library.snapshotFor(principal)), (view) => {
          const needle = args.query.toLowerCase()
          const found: Array<{ path: string; lines: Array<string> }> = []
          for (const [path, bytes] of [...HashMap.entries(view.files)].sort(([a], [b]) => a.localeCompare(b))) {
            if (found.length === searchLimits.files) break
            const lines = utf8.decode(bytes).split("\n").filter((line) => line.toLowerCase().includes(needle))
            if (lines.length === 0 && !path.toLowerCase().includes(needle)) continue
            found.push({ path, lines: lines.slice(0, searchLimits.lines).map((line) => line.slice(0, 300)) })
          }
          return { files: found }
        })
    },
    {
      name: "read_library_file",
      title: "Read a Context Library file",
      description: "The text of a Context Library file the caller may read.",
      arguments: ReadLibraryFile,
      readOnly: true,
      scope: "read",
      call: (principal, args: typeof ReadLibraryFile.Type) =>
        Effect.flatMap(
          Effect.orDie(library.snapshotFor(principal)),
          (view) =>
            Option.match(HashMap.get(view.files, args.path), {
              // Absent and unreadable read alike.
              onNone: () => Effect.fail({ message: `no file ${args.path} in the library` }),
              onSome: (bytes) => Effect.succeed({ path: args.path, content: utf8.decode(bytes) })
            })
        )
    },
    {
      name: "list_playbooks",
      title: "List playbooks",
      description: "The organization's playbooks (scheduled prompts that deliver reports): ids, names, status.",
      arguments: ListPlaybooks,
      readOnly: true,
      scope: "read",
      call: (principal, args: typeof ListPlaybooks.Type) =>
        Effect.map(
          playbooks.list(principal, listQuery(args.search_term === undefined ? {} : { search_term: args.search_term })),
          (listed) => ({
            playbooks: listed.playbooks.map((playbook) => ({
              id: playbook.id,
              name: playbook.name,
              status: playbook.status,
              ...(playbook.cron_string === undefined ? {} : { cron_string: playbook.cron_string })
            })),
            total_count: listed.total_count
          })
        )
    },
    {
      name: "run_playbook",
      title: "Run a playbook",
      description: "Runs a playbook now (its owner only) and answers its report; dry_run only checks it could run.",
      arguments: RunPlaybook,
      readOnly: false,
      scope: "playbooks",
      call: (principal, args: typeof RunPlaybook.Type) =>
        Effect.flatMap(
          runs.run(principal, args.playbook_id, { dry_run: args.dry_run ?? false }, sign),
          (result) => Effect.orDie(Schema.encode(PlaybookRuns.RunResponse)(result))
        )
    },
    {
      name: "ask",
      title: "Ask Sightline",
      description: "Asks Sightline's own analyst a question in natural language. It answers with how it read the " +
        "question, the SQL it ran and the rows, or says which word it could not place. When the question could " +
        "mean several things it answers with a clarification instead: ask again with chat_id and the id of the " +
        "choice meant (choice), or with a question of your own.",
      arguments: Ask,
      readOnly: false,
      scope: "ask",
      call: (principal, args: typeof Ask.Type, progress) =>
        Effect.gen(function*() {
          const handle = yield* answers.ask(principal, {
            ...(args.question === undefined ? {} : { question: args.question }),
            ...(args.choice === undefined ? {} : { choice: args.choice }),
            ...(args.connector_ids === undefined ? {} : { connector_ids: args.connector_ids }),
            ...(args.chat_id === undefined ? {} : { chat_id: args.chat_id as ChatId })
          }, sign)
          const answered = yield* Answers.answered(handle, (cell) =>
            cell.status === "running" || cell.status === "completed" || cell.status === "failed"
              ? progress(
                `${cell.type} ${cell.status}${cell.content === undefined ? "" : `: ${cell.content.slice(0, 120)}`}`
              )
              : Effect.void)
          if (answered.done?.status !== "completed") {
            return yield* Effect.fail({ message: answered.done?.error ?? "the answer did not complete" })
          }
          const chatId = handle.metadata.chat_id
          const structured = {
            chat_id: chatId,
            answer: answered.text,
            ...(answered.reading === undefined ? {} : { reading: answered.reading }),
            ...(answered.sql === undefined ? {} : { sql: answered.sql }),
            ...(answered.rows === undefined ? {} : { rows: answered.rows }),
            ...(answered.chart === undefined ? {} : { chart: { title: answered.chart.title } }),
            // Asked instead of answering: ask again with chat_id and one of these choices' ids.
            ...(answered.clarification === undefined ? {} : { clarification: answered.clarification })
          }
          return answered.chart === undefined
            ? structured
            : new Rich(structured, [yield* chartContent(chatId, answered.chart)])
        })
    }
  ]
  return tools
})

/**
 * The tools the agent loop (`Answers`) offers a model: their names, the Effect schemas of their
 * arguments, and their declarations. A declaration's JSON Schema is derived from the arguments'
 * schema (`LanguageModel.toolOf`), and the same schema decodes what the model sends.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ChartSpec from "./ChartSpec.js"
import * as Clarification from "./Clarification.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboard from "./Dashboard.js"
import { CellId, ConnectorId } from "./Ids.js"
import * as Investigation from "./Investigation.js"
import * as LanguageModel from "./LanguageModel.js"
import * as SemanticQuery from "./SemanticQuery.js"

/**
 * The tool names the loop offers.
 *
 * @since 0.1.0
 * @category constants
 */
export const toolNames = {
  queryMetrics: "query_metrics",
  runVerifiedQuery: "run_verified_query",
  runSql: "run_sql",
  createChart: "create_chart",
  searchLibrary: "search_library",
  readLibraryFile: "read_library_file",
  runSavedQuery: "run_saved_query",
  webSearch: "web_search",
  writeReport: "write_report",
  runPython: "run_python",
  askClarification: "ask_clarification",
  investigate: "investigate",
  buildDashboard: "build_dashboard"
} as const

/**
 * The rows of a result the model sees (it gets the count and the columns of the rest).
 *
 * @since 0.1.0
 * @category constants
 */
export const modelRows = ConnectorRuntime.previewRows

/**
 * The most characters of a library file `read_library_file` returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxLibraryFileChars = 20_000

/**
 * The name the last query result has in the Python kernel.
 *
 * @since 0.1.0
 * @category constants
 */
export const lastResultDataframe = "df"

const nonEmpty = (what: string) =>
  Schema.String.pipe(Schema.filter((text) => text.trim().length > 0 || `${what} must not be empty`))

// -----------------------------------------------------------------------------------------------
// The semantic layer
// -----------------------------------------------------------------------------------------------

/**
 * The arguments of `query_metrics`: a semantic query on one connector's model.
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryMetricsArguments = Schema.Struct({
  connector_id: ConnectorId.annotations({ description: "The connector whose semantic model to query" }),
  based_on: Schema.optional(CellId.annotations({
    description: "The cell_id of an earlier answer's query (see the earlier answers) that this query refines: " +
      "its query is taken, and each field given here replaces that field"
  })),
  ...SemanticQuery.SemanticQuery.fields,
  metrics: Schema.optional(SemanticQuery.SemanticQuery.fields.metrics.annotations({
    description: "Names of the model's metrics; none lists the distinct values of the dimensions. Required " +
      "without based_on"
  }))
})

/**
 * `query_metrics`: the compiler writes the SQL from names of the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const queryMetricsTool = LanguageModel.toolOf(
  toolNames.queryMetrics,
  "Answers with the semantic model: name its metrics, dimensions (`table.name` where two tables share one), " +
    "filters on dimensions (values as the model lists them or their synonyms), segments, a time dimension " +
    "with a grain and a period (start inclusive, end exclusive, YYYY-MM-DD), an order and a limit. The SQL " +
    "is written for you from the model's definitions. Returns how the question was read, the columns, the " +
    `first ${modelRows} rows and the row count.`,
  QueryMetricsArguments
)

/**
 * The arguments of `investigate`: a metric over a period, compared with another or on its own.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InvestigateArguments = Investigation.InvestigationRequest

/**
 * `investigate`: where a change is (or where a total comes from), as a plan of semantic queries.
 *
 * @since 0.1.0
 * @category constants
 */
export const investigateTool = LanguageModel.toolOf(
  toolNames.investigate,
  "Finds where a metric changed between two periods (compared_with, usually the period before) or where its " +
    "total comes from (no compared_with): the totals, the change by each driver dimension with each value's " +
    "part (a ratio's split into rate and mix), and the top contributor broken down one level deeper. Use it " +
    "for why, what drove, which are behind and where-from questions. Its parts say where the change is, " +
    "never why it happened: add only what the figures support, and cite the steps' cells.",
  InvestigateArguments
)

/**
 * `build_dashboard`: a dashboard of semantic and verified queries, filed as a library change.
 *
 * @since 0.1.0
 * @category constants
 */
export const buildDashboardTool = LanguageModel.toolOf(
  toolNames.buildDashboard,
  "Builds a dashboard (dashboards/<name>.yaml) from the connector's library semantic model, or adds tiles to " +
    "the one of that name, and files it as a library change for review. Each tile is a semantic query (or a " +
    "verified query) with a visualization: figure (compare: previous_period for its trend), line over a grain, " +
    "bar over one dimension, stacked_bar over two, area, table or waterfall; they are placed on the grid in " +
    "order. Use it when asked for a dashboard, and say which metrics and breakdowns you chose.",
  Dashboard.BuildRequest
)

/**
 * The arguments of `run_verified_query`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunVerifiedQueryArguments = Schema.Struct({
  name: Schema.String.annotations({ description: "The verified query's name" }),
  connector_id: Schema.optional(ConnectorId.annotations({
    description: "Needed when several connectors' models have a verified query of this name"
  })),
  params: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
      .annotations({ description: "A value for each of its parameters (defaults apply when left out)" })
  )
})

/**
 * `run_verified_query`: a question with SQL the organization verified, run with parameters.
 *
 * @since 0.1.0
 * @category constants
 */
export const runVerifiedQueryTool = LanguageModel.toolOf(
  toolNames.runVerifiedQuery,
  "Runs a verified query of a semantic model (SQL a person checked for that question) with values for its " +
    "parameters. Prefer it when one answers the question.",
  RunVerifiedQueryArguments
)

// -----------------------------------------------------------------------------------------------
// SQL, charts, the library, the web, Python, the report
// -----------------------------------------------------------------------------------------------

/**
 * The arguments of `run_sql`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSqlArguments = Schema.Struct({
  connector_id: ConnectorId.annotations({ description: "The connector to query (see Data)" }),
  sql: nonEmpty("sql").annotations({ description: "One SQL statement in the connector's dialect" })
})

/**
 * `run_sql`: SQL the model writes, for what the semantic model cannot express.
 *
 * @since 0.1.0
 * @category constants
 */
export const runSqlTool = LanguageModel.toolOf(
  toolNames.runSql,
  `Runs one SQL statement on a connector and returns the columns, the first ${modelRows} rows and the row ` +
    "count. Read-only unless the connector allows writes.",
  RunSqlArguments
)

/**
 * `create_chart`.
 *
 * @since 0.1.0
 * @category constants
 */
export const createChartTool = LanguageModel.toolOf(
  toolNames.createChart,
  "Draws a chart of the last successful query result: a mark and the result columns on each axis.",
  ChartSpec.ChartRequest
)

/**
 * The arguments of `search_library`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SearchLibraryArguments = Schema.Struct({ query: Schema.String })
/**
 * The arguments of `read_library_file`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReadLibraryFileArguments = Schema.Struct({ path: Schema.String })
/**
 * The arguments of `run_saved_query`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSavedQueryArguments = Schema.Struct({
  path: Schema.String,
  connector_id: Schema.optional(ConnectorId.annotations({
    description: "Needed when the query names no connector and the chat has several"
  })),
  params: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
      .annotations({ description: "A value for each :parameter of the query" })
  )
})

/**
 * The Context Library's tools.
 *
 * @since 0.1.0
 * @category constants
 */
export const libraryTools: ReadonlyArray<LanguageModel.Tool> = [
  LanguageModel.toolOf(
    toolNames.searchLibrary,
    "Searches the Context Library (notes and saved queries) for words; returns paths and snippets.",
    SearchLibraryArguments
  ),
  LanguageModel.toolOf(toolNames.readLibraryFile, "Reads one file of the Context Library.", ReadLibraryFileArguments),
  LanguageModel.toolOf(
    toolNames.runSavedQuery,
    "Runs a saved query of the Context Library with values for its :parameters.",
    RunSavedQueryArguments
  )
]

/**
 * The arguments of `web_search`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebSearchArguments = Schema.Struct({ query: nonEmpty("query") })

/**
 * `web_search`.
 *
 * @since 0.1.0
 * @category constants
 */
export const webSearchTool = LanguageModel.toolOf(
  toolNames.webSearch,
  "Searches the web; returns titles, URLs and snippets. Say which facts come from the web.",
  WebSearchArguments
)

/**
 * The arguments of `run_python`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunPythonArguments = Schema.Struct({
  code: nonEmpty("code").annotations({ description: "Python source" })
})

/**
 * `run_python`.
 *
 * @since 0.1.0
 * @category constants
 */
export const runPythonTool = LanguageModel.toolOf(
  toolNames.runPython,
  "Runs Python in this chat's sandbox (a persistent kernel with pandas and matplotlib; variables " +
    `survive between calls). The rows of the last query result are the DataFrame ${lastResultDataframe}. ` +
    "Prints and the last expression are returned; matplotlib figures are shown to the user as images. " +
    "No network access.",
  RunPythonArguments
)

const blockProperties = {
  type: { type: "string", enum: ["hero", "text", "image", "list", "image_text", "card", "divider", "spacer"] },
  heading: { type: "string" },
  content: { type: "string" },
  image_url: {
    type: "string",
    description: "chart:<n> for the run's n-th chart (create_chart says which), or an https URL"
  },
  image_alt: { type: "string" },
  variant: { type: "string", enum: ["circular", "rounded", "pill", "none"] },
  items: { type: "array", items: { type: "string" } },
  height: { type: "integer", minimum: 0 }
}

/**
 * `write_report`.
 *
 * @since 0.1.0
 * @category constants
 */
export const writeReportTool: LanguageModel.Tool = {
  name: toolNames.writeReport,
  description: "Writes the report of this run: a subject, a one-paragraph summary and layout blocks. " +
    "Call it once, after the queries and charts it shows; a later call replaces the report.",
  parameters: {
    type: "object",
    properties: {
      subject: { type: "string", description: "The e-mail subject: short and specific" },
      summary: { type: "string", description: "The findings in two or three sentences" },
      blocks: {
        type: "array",
        items: {
          type: "object",
          properties: {
            ...blockProperties,
            blocks: {
              type: "array",
              description: "The blocks inside a card",
              items: { type: "object", properties: blockProperties, required: ["type"] }
            }
          },
          required: ["type"]
        }
      }
    },
    required: ["subject", "summary", "blocks"],
    additionalProperties: false
  }
}

/**
 * `ask_clarification`: offered to runs a person asked, who can answer.
 *
 * @since 0.1.0
 * @category constants
 */
export const askClarificationTool = LanguageModel.toolOf(
  toolNames.askClarification,
  "Asks the person instead of answering, when the question could mean several things the data can " +
    "answer (a name several rows share, a word that names more than one metric or dimension, an " +
    "unclear period) and nothing in the conversation tells which. Give a short question and 2 to " +
    `${Clarification.maxChoices} choices, each a complete question you could answer as it stands. ` +
    "Never ask when one reading is clearly meant, and never answer one of the choices yourself: " +
    "after this call, end your turn by restating the question in one sentence.",
  Clarification.ClarificationInput
)

/**
 * A tool call's arguments decoded with its schema, or why they do not decode (for the model to correct).
 *
 * @since 0.1.0
 * @category schemas
 */
export const decodeArguments = <A, I>(schema: Schema.Schema<A, I>, json: string): Either.Either<A, string> => {
  let value: unknown
  try {
    value = JSON.parse(json === "" ? "{}" : json)
  } catch {
    return Either.left("the arguments are not valid JSON")
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(schema)(value),
    (error) => ParseResult.TreeFormatter.formatErrorSync(error)
  )
}

/**
 * The offline model: the embedded default, with no network and no weights. It is deterministic and
 * honest about what it is. For a question it (see docs/offline-model.md):
 * 0. declines causes, forecasts, intersections and correlations with their reason (`refusals.ts`);
 * 1. answers with a verified query of a reviewed semantic model (the chat's models reach it as data,
 *    `GenerateRequest.semantic`) when the question asks what one asks, saying so first; the cell is
 *    then trusted;
 * 2. reads the question into a semantic query of the connector's model (`reader.ts`: every word
 *    accounted for, or the question declined naming the words it could not place) and calls
 *    `query_metrics` with it, stating the reading first;
 * 3. otherwise (a name to look up in the data, a list, a ranking within groups, "when") plans one
 *    read-only query from the connectors' schemas as the system prompt describes them (`planner.ts`);
 * 4. asks `create_chart` for a chart of the result when it has a label and a value per row, and
 *    when `write_report` is offered (a playbook run), writes a report of the answer;
 * 5. answers in a short paragraph with the numbers, saying it is the offline model.
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as SchemaPrompt from "@sightline/core/SchemaPrompt"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Periods from "./internal/periods.js"
import * as Planner from "./internal/planner.js"
import * as Reader from "./internal/reader.js"
import * as Refusals from "./internal/refusals.js"
import * as Verified from "./internal/verified.js"

/** The provider name of the offline model in the catalogue. */
export const provider = "offline"

/** The line every offline answer ends with. */
export const signature =
  "_Answered by Sightline's offline model: it reads your question into one query without a language model. " +
  "Configure a model provider for open-ended questions._"

interface QueryResult {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  readonly row_count: number
  readonly truncated: boolean
}

// Numbers show at most two decimals; `decimals` fixes how many, so that a column reads evenly.
const format = (value: unknown, decimals?: number): string =>
  typeof value === "number"
    ? value.toLocaleString("en-US", { minimumFractionDigits: decimals ?? 0, maximumFractionDigits: decimals ?? 2 })
    : value === null || value === undefined
    ? "—"
    : String(value)

/**
 * How each column's values are written: a column with any fraction (an amount, an average) writes
 * every number with two decimals (1,200.50 above 900.00, not 1,200.5 above 900), or four when all of
 * them are below one (a rate: 0.0325, not 0.03); one of whole numbers (a count) with none.
 */
const columnFormats = (result: QueryResult): ReadonlyArray<(value: unknown) => string> =>
  result.columns.map((name, column) => {
    const numbers = result.rows.map((row) => row[column]).filter((value): value is number => typeof value === "number")
    const fractional = numbers.some((value) => !Number.isInteger(value))
    const decimals = !fractional ? 0 : numbers.every((value) => Math.abs(value) < 1) ? 4 : 2
    // A semantic query's time column is `period_<grain>`.
    const grain = name.replace(/^period_/, "")
    const bucket = Object.hasOwn(buckets, grain) ? buckets[grain] : undefined
    return (value: unknown) =>
      bucket !== undefined && typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)
        ? bucket(value)
        : format(value, decimals)
  })

// A period of a series is the day it starts on, which sorts (and stays so in the table and the
// CSV); the answer says it as people do: "2025", "2025 Q3", "March 2025", "the week of 2025-03-03".
const buckets: Record<string, (day: string) => string> = {
  year: (day) => day.slice(0, 4),
  quarter: (day) => `${day.slice(0, 4)} Q${(Number(day.slice(5, 7)) + 2) / 3}`,
  month: (day) => {
    const month = Periods.monthNames[Number(day.slice(5, 7)) - 1]!
    return `${month.charAt(0).toUpperCase()}${month.slice(1)} ${day.slice(0, 4)}`
  },
  week: (day) => `the week of ${day}`
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

const label = (plan: Planner.Plan) =>
  plan.aggregate === "count"
    ? `number of ${plan.measureLabel}`
    : `${plan.aggregate === "avg" ? "average" : "total"} ${plan.measureLabel}`

/** What a result is broken down by: "region", "category and region". */
const byWhat = (plan: Planner.Plan, result: QueryResult) =>
  `${plan.labelColumn ?? result.columns[0]}${plan.splitColumn === undefined ? "" : ` and ${plan.splitColumn}`}`

/** A time as the answer says it: "on 2025-12-31 at 23:58 UTC", or "on 2025-12-31" for a date. */
const moment = (value: unknown): string => {
  const text = String(value)
  const parts = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}))?/.exec(text)
  if (parts === null) return text
  return parts[2] === undefined
    ? `on ${parts[1]}`
    : `on ${parts[1]} at ${parts[2]}${/Z$|\+00(?::?00)?$/.test(text) ? " UTC" : ""}`
}

/** Whether a result holds nothing: no rows, a total over none (NULL), or a count of none. */
const isEmpty = (plan: Planner.Plan, result: QueryResult): boolean => {
  if (result.rows.length === 0) return true
  if ((plan.shape !== "total" && plan.shape !== "when") || result.rows.length !== 1) return false
  const value = result.rows[0]![0]
  return value === null || value === undefined || (plan.aggregate === "count" && value === 0)
}

/**
 * Where the data is, when the window lies outside it: "No revenue was recorded in October 2026"
 * reads as a quiet month unless it says the orders end in 2025. `span` is the span query's row.
 */
const outside = (plan: Planner.Plan, span: ReadonlyArray<unknown> | undefined): string => {
  if (plan.span === undefined || span === undefined) return ""
  const [earliest, latest] = span.map((day) => typeof day === "string" ? day.slice(0, 10) : undefined)
  if (earliest === undefined || latest === undefined) return ` There are no ${plan.span.of} at all.`
  const { from, to } = plan.span
  // ISO days compare as text; `to` is the day after the window.
  return (from !== undefined && from > latest) || (to !== undefined && to <= earliest)
    ? ` The ${plan.span.of} in the data date from ${earliest} to ${latest}: ask about a period within them.`
    : ""
}

/** The answer text for a plan and its result (and its span's row, when the window held nothing). */
export const answer = (plan: Planner.Plan, result: QueryResult, span?: ReadonlyArray<unknown>): string => {
  // What the rows were kept to ("where status is cancelled"), then when ("in 2025").
  const period = `${
    (plan.filters ?? []).map((filter) => ` where ${filter.column} is ${filter.values.join(" or ")}`).join(" and")
  }${plan.period === undefined ? "" : ` ${plan.period}`}`
  const formats = columnFormats(result)
  if (plan.shape === "list") {
    // The rows the query returned (`row_count`), of which the model sees a preview (`rows`).
    if (result.row_count === 0) return `No ${plan.measureLabel} matched${period}.${outside(plan, span)}`
    const count = result.row_count >= Planner.listLimit ? `The first ${Planner.listLimit}` : `The ${result.row_count}`
    return `${count} ${plan.measureLabel}${period}:\n\n${
      result.rows.slice(0, 25).map((row) => `- ${formats[0]!(row[0])}`).join("\n")
    }${result.row_count > 25 ? `\n\n(${result.row_count - 25} more in the table and the CSV.)` : ""}`
  }
  if (plan.shape === "when") {
    const at = result.rows[0]?.[0]
    if (at === null || at === undefined) return `No ${plan.measureLabel} was recorded${period}.${outside(plan, span)}`
    return `The ${plan.valueColumn.startsWith("last_") ? "last" : "first"} ${plan.measureLabel}${period} was ${
      moment(at)
    }.`
  }
  if (plan.shape === "total" || result.columns.length < 2) {
    const value = result.rows[0]?.[0]
    if (plan.aggregate === "count") {
      return `There were **${format(value ?? 0)}** ${plan.measureLabel}${period}.${outside(plan, span)}`
    }
    // A sum or an average over no rows is NULL: say so rather than print a dash.
    return value === null || value === undefined
      ? `No ${plan.measureLabel} ${/^\w+[^s]s\b/.test(plan.measureLabel) ? "were" : "was"} recorded${period}.${
        outside(plan, span)
      }`
      : `The ${label(plan)}${period} was **${formats[0]!(value)}**.`
  }
  if (result.rows.length === 0) return `No rows matched${period}.${outside(plan, span)}`
  // The value is the last column; the ones before it say what it is of.
  const valueAt = result.columns.length - 1
  const table = [
    `| ${result.columns.join(" | ")} |`,
    `| ${result.columns.map((_, i) => i < valueAt ? "---" : "---:").join(" | ")} |`,
    ...result.rows.slice(0, 25).map((row) => `| ${row.map((value, i) => formats[i]!(value)).join(" | ")} |`)
  ].join("\n")
  // A result cut at the row cap says so: "9,975 more" was read as all there were.
  const more = result.row_count > 25
    ? `\n\n(${format(result.row_count - 25)} more rows in the table and the CSV${
      result.truncated ? `; the query stopped at ${format(result.row_count)} rows, and there are more` : ""
    }.)`
    : ""
  const ranking = plan.ascending === true ? "bottom" : "top"
  const heading = plan.rankedPer !== undefined
    ? `For each ${plan.labelColumn}, the ${ranking} ${plan.rankedPer === 1 ? plan.splitColumn : plan.rankedPer} by ${
      label(plan)
    }${period}:`
    : plan.shape === "top"
    ? `The ${ranking} ${result.row_count} by ${label(plan)}${period}:`
    : `${capitalize(label(plan))} by ${byWhat(plan, result)}${period}:`
  const first = result.rows[0]!
  // A series has no first; a ranking within groups has one in each.
  const lead = plan.shape === "series" || plan.rankedPer !== undefined
    ? ""
    : ` **${first.slice(0, valueAt).map((value, i) => formats[i]!(value)).join(", ")}** ${
      plan.ascending === true ? "is lowest" : "leads"
    } with **${formats[valueAt]!(first[valueAt])}**.`
  return `${heading}${lead}\n\n${table}${more}`
}

// Streams text as a model would: a few words per delta.
const textParts = (text: string): ReadonlyArray<LanguageModel.Part> => {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [text]
  const deltas: Array<LanguageModel.Part> = []
  for (let i = 0; i < pieces.length; i += 4) {
    deltas.push(LanguageModel.TextDelta.make({ text: pieces.slice(i, i + 4).join("") }))
  }
  return [...deltas, LanguageModel.Finish.make({ reason: "stop", usage: { inputTokens: 0, outputTokens: 0 } })]
}

const reply = (text: string) => textParts(`${text}\n\n${signature}`)

const parseResult = (content: string): QueryResult | undefined => {
  try {
    const parsed = JSON.parse(content)
    return Array.isArray(parsed?.columns) && Array.isArray(parsed?.rows) ? parsed : undefined
  } catch {
    return undefined
  }
}

const toolName = (messages: ReadonlyArray<LanguageModel.Message>, callId: string | undefined): string | undefined => {
  for (const message of messages) {
    for (const call of message.toolCalls ?? []) if (call.id === callId) return call.name
  }
  return undefined
}

/**
 * The plan, replayed over this answer's query results: each lookup of a name that the planner asks
 * for takes the next result (rows of table, column and name; none when it failed), until it plans a
 * query or declines. `looked` is how many results the lookups took.
 */
const replay = (
  question: string,
  connectors: ReadonlyArray<SchemaPrompt.ConnectorSchema>,
  now: Date,
  glossary: Planner.Glossary,
  results: ReadonlyArray<string>
): { readonly plan: Planner.Plan | Planner.Unplannable; readonly looked: number } => {
  const lookedUp: Array<Planner.LookedUp> = []
  for (;;) {
    const plan = Planner.plan(question, connectors, now, glossary, lookedUp)
    const result = results[lookedUp.length]
    if (!("unplannable" in plan) || plan.lookup === undefined || result === undefined) {
      return { plan, looked: lookedUp.length }
    }
    lookedUp.push({
      phrase: plan.lookup.phrase,
      found: (parseResult(result)?.rows ?? []).map(([table, column, value]) => ({
        table: String(table),
        column: String(column),
        value: String(value)
      }))
    })
  }
}

/** One generation of the offline model. */
export const respond = (request: LanguageModel.GenerateRequest, now: Date): ReadonlyArray<LanguageModel.Part> => {
  const messages = request.messages
  const question = [...messages].reverse().find((m) => m.role === "user")?.content ?? ""
  const connectors = SchemaPrompt.parse(request.system ?? "")
  // Definitions from the library's ontology notes name measures in the organization's own words.
  const system = request.system ?? ""
  const notesAt = system.indexOf("### Ontology notes")
  const glossary = notesAt < 0 ? {} : Planner.glossaryOf(system.slice(notesAt))
  const offers = (name: string) => request.tools?.some((tool) => tool.name === name) ?? false
  const turn = messages.filter((m) => m.role === "assistant").length
  const last = messages.at(-1)

  if (!offers("run_sql")) {
    return reply(
      "I can only answer questions about data, and no data connector is enabled in this chat. Add `connector_ids` to the request."
    )
  }
  // This answer's queries, in order: a lookup of each name the question says that no comment lists
  // ("Helix Mini"), the plan's, then its span's when the plan's window held nothing.
  const asked = Option.getOrElse(Arr.findLastIndex(messages, (m) => m.role === "user"), () => -1)
  const results = messages.slice(asked + 1)
    .filter((m) => m.role === "tool" && toolName(messages, m.toolCallId) === "run_sql")
    .map((m) => m.content)
  // Connectors whose schema could not be read (the agent's prompt says why): with none readable,
  // the reason is the answer, not "no connector".
  const unreadable = system.split("\n").filter((line) => / schema unavailable: /.test(line))
  if (connectors.length === 0 && unreadable.length > 0) {
    return reply(
      `I could not read the data: ${unreadable.map((line) => line.replace(/^Connector /, "connector ")).join("; ")}`
    )
  }
  // A question a verified query asks is answered by it, and the answer is trusted.
  const verified = offers("run_verified_query") ? Verified.match(question, request.semantic ?? []) : undefined
  if (verified !== undefined) {
    return answerWith(request, asked, turn, {
      name: "run_verified_query",
      arguments: { name: verified.name, connector_id: verified.connectorId },
      title: verified.question,
      say: (result) => `${Verified.reading(verified)}\n\n${table(result)}`
    })
  }
  // The connector's semantic model (the library's, or the one derived from its schema) reads the
  // question into a semantic query, or declines it. Until the reader reads what the planner does
  // (names looked up in the data, lists, rankings within groups, "when"), those go on to the planner.
  const read = offers("query_metrics") ? Reader.read(question, request.semantic ?? [], now) : undefined
  // Without a model to read with, causes, forecasts and questions of more than one query are still
  // declined with their reason (the reader declines them first): any figure would answer another.
  const refusal = read === undefined ? Refusals.of(question) : undefined
  if (refusal !== undefined) return reply(`I can't answer this: ${refusal.reason}.`)
  if (read !== undefined && "declined" in read && read.final) return reply(`I can't answer this: ${read.declined}.`)
  if (read !== undefined && !("declined" in read)) {
    return answerWith(request, asked, turn, {
      name: "query_metrics",
      arguments: { connector_id: read.connectorId, ...read.query },
      title: question.trim().split("\n")[0]!,
      say: (result) => readAnswer(read, result)
    })
  }
  const { looked, plan } = replay(question, connectors, now, glossary, results)
  const runSql = (sql: string, connectorId: number) =>
    LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "run_sql",
      arguments: { connector_id: connectorId, sql }
    })
  if ("unplannable" in plan) {
    if (plan.lookup !== undefined && looked === results.length) return runSql(plan.lookup.sql, plan.lookup.connectorId)
    return reply(
      `I could not turn this question into a query: ${plan.unplannable}. Try naming a table and a measure, ` +
        "for example \"total revenue by month last year\" or \"top 5 products by revenue\"."
    )
  }
  const [planned, spanned] = results.slice(looked)
  if (planned === undefined) return runSql(plan.sql, plan.connectorId)
  // The tool that answered last (a query, the chart, the report), and what it said.
  const lastTool = last?.role === "tool" ? toolName(messages, last.toolCallId) : undefined
  const lastContent = last?.content ?? ""
  if (planned.startsWith("error:")) return reply(`The query failed: ${planned.slice("error:".length).trim()}`)
  const result = parseResult(planned)
  if (result === undefined) return reply("The query returned nothing I can read.")
  if (spanned === undefined && plan.span !== undefined && isEmpty(plan, result)) {
    return runSql(plan.span.sql, plan.connectorId)
  }
  const span = spanned === undefined ? undefined : parseResult(spanned)?.rows[0]

  if (lastTool === "run_sql" && offers("create_chart") && result.columns.length >= 2 && result.rows.length >= 2) {
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "create_chart",
      arguments: {
        title: `${capitalize(label(plan))} by ${byWhat(plan, result)}${
          plan.period === undefined ? "" : ` ${plan.period}`
        }`,
        mark: plan.shape === "series" ? "line" : "bar",
        x: result.columns[0],
        y: result.columns.at(-1),
        // A second group is a colour: a line or a stacked bar for each of its values.
        ...(result.columns.length > 2 ? { color: result.columns[1] } : {})
      }
    })
  }
  if (offers("write_report") && lastTool !== "write_report") {
    const chart = lastTool === "create_chart" ? chartUrl(lastContent) : undefined
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "write_report",
      arguments: report(question, plan, result, chart, span)
    })
  }
  if (lastTool === "write_report" && lastContent.startsWith("error:")) {
    return reply(`The report could not be written: ${lastContent.slice("error:".length).trim()}`)
  }
  return reply(answer(plan, result, span))
}

/** A tool that answers the question in one call: what to call, and how to say its result. */
interface OneCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
  /** The chart's and the report's title. */
  readonly title: string
  readonly say: (result: QueryResult & { readonly reading?: string }) => string
}

/** The turns of a question one tool call answers: call it, chart the result, report it, then say it. */
const answerWith = (
  request: LanguageModel.GenerateRequest,
  asked: number,
  turn: number,
  call: OneCall
): ReadonlyArray<LanguageModel.Part> => {
  const messages = request.messages
  const offers = (name: string) => request.tools?.some((tool) => tool.name === name) ?? false
  const ran = messages.slice(asked + 1).find((m) => m.role === "tool" && toolName(messages, m.toolCallId) === call.name)
  if (ran === undefined) {
    return LanguageModel.callTools({ id: `offline_${turn + 1}`, name: call.name, arguments: call.arguments })
  }
  if (ran.content.startsWith("error:")) return reply(`The query failed: ${ran.content.slice("error:".length).trim()}`)
  const result = parseResult(ran.content) as (QueryResult & { readonly reading?: string }) | undefined
  if (result === undefined) return reply("The query returned nothing I can read.")
  const title = call.title.slice(0, 200)
  const last = messages.at(-1)
  const lastTool = last?.role === "tool" ? toolName(messages, last.toolCallId) : undefined
  const text = call.say(result)
  if (lastTool === call.name && offers("create_chart") && result.columns.length >= 2 && result.rows.length >= 2) {
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "create_chart",
      arguments: {
        title,
        mark: /^(?:period_)?(?:day|week|month|quarter|year)$/.test(result.columns[0] ?? "") ? "line" : "bar",
        x: result.columns[0],
        y: result.columns.at(-1),
        ...(result.columns.length > 2 ? { color: result.columns[1] } : {})
      }
    })
  }
  if (offers("write_report") && lastTool !== "write_report") {
    const chart = lastTool === "create_chart" ? chartUrl(last?.content ?? "") : undefined
    // The summary is what the answer says before its table: the reading, and its figure or leader.
    const paragraphs = plainText(text).split("\n\n")
    const tableAt = paragraphs.findIndex((p) => p.startsWith("|"))
    const lead = paragraphs.slice(0, tableAt < 0 ? paragraphs.length : Math.max(1, tableAt)).join(" ")
    const rest = tableAt < 0 ? [] : paragraphs.slice(tableAt)
    // Rows of a label and a value are a list; a single figure is the text after the lead.
    const rows = result.columns.length >= 2 ? result.rows.slice(0, 10) : []
    const formats = columnFormats(result)
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "write_report",
      arguments: {
        subject: title.slice(0, 120),
        summary: lead ?? "",
        blocks: [
          { type: "hero", heading: title, content: lead ?? "" },
          ...(chart === undefined ? [] : [{ type: "image", image_url: chart, image_alt: title }]),
          ...(rows.length > 0
            ? [{
              type: "list",
              heading: title,
              items: rows.map((row) =>
                `${row.slice(0, -1).map((value, i) => formats[i]!(value)).join(", ")}: ${
                  formats[row.length - 1]!(row.at(-1))
                }`
              )
            }]
            : rest.length === 0
            ? []
            : [{ type: "text", content: rest.join("\n\n") }]),
          { type: "divider" },
          { type: "text", content: plainText(signature).replace(/_/g, "") }
        ]
      }
    })
  }
  if (lastTool === "write_report" && (last?.content ?? "").startsWith("error:")) {
    return reply(`The report could not be written: ${(last?.content ?? "").slice("error:".length).trim()}`)
  }
  return reply(text)
}

/**
 * The answer to a question read into a semantic query: the reading first (and any word taken for
 * another), the leader of a ranking, then the figures.
 */
const readAnswer = (read: Reader.Read, result: QueryResult & { readonly reading?: string }): string => {
  const corrected = read.corrections.length === 0
    ? ""
    : ` (I took ${read.corrections.map(([said, as]) => `"${said}" for "${as}"`).join(", ")}.)`
  const reading = `I read this as: ${result.reading ?? "the semantic query shown"}.${corrected}`
  if (result.rows.length === 0) return `${reading}\n\nNothing matched.`
  const formats = columnFormats(result)
  if (result.rows.length === 1 && result.columns.length === 1) {
    const value = result.rows[0]![0]
    return value === null || value === undefined
      ? `${reading}\n\nNothing was recorded.`
      : `${reading}\n\n**${formats[0]!(value)}**`
  }
  const order = read.query.order?.[0]
  const first = result.rows[0]!
  const valueAt = result.columns.length - 1
  const named = `**${first.slice(0, valueAt).map((value, i) => formats[i]!(value)).join(", ")}**`
  // One group is said whole; a ranking says its leader.
  const lead = result.rows.length === 1
    ? `${named}: **${formats[valueAt]!(first[valueAt])}**.\n\n`
    : order === undefined || first[valueAt] === null
    ? ""
    : `${named} ${order.direction === "asc" ? "is lowest" : "leads"} with **${formats[valueAt]!(first[valueAt])}**.\n\n`
  return `${reading}\n\n${lead}${table(result)}`
}

/** A result as a Markdown table (the first rows of it). */
const table = (result: QueryResult): string => {
  const formats = columnFormats(result)
  const rows = result.rows.slice(0, 20)
  return [
    `| ${result.columns.join(" | ")} |`,
    `| ${result.columns.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map((value, i) => formats[i]!(value)).join(" | ")} |`),
    ...(result.row_count > rows.length ? [`\n${result.row_count - rows.length} more rows in the table.`] : [])
  ].join("\n")
}

// The `image_url` that `create_chart` answered with (`{"image_url":"chart:1"}`).
const chartUrl = (content: string): string | undefined => {
  try {
    const parsed = JSON.parse(content)
    return typeof parsed?.image_url === "string" ? parsed.image_url : undefined
  } catch {
    return undefined
  }
}

const plainText = (markdown: string): string => markdown.replace(/\*\*/g, "")

/** The report the offline model writes for a playbook: the answer, its chart and its rows. */
export const report = (
  question: string,
  plan: Planner.Plan,
  result: QueryResult,
  chart: string | undefined,
  span?: ReadonlyArray<unknown>
) => {
  const subject = question.trim().split("\n")[0]!.slice(0, 120)
  const text = plainText(answer(plan, result, span))
  const [lead, ...rest] = text.split("\n\n")
  const rows = result.columns.length >= 2 ? result.rows.slice(0, 10) : []
  const formats = columnFormats(result)
  return {
    subject,
    summary: lead ?? "",
    blocks: [
      { type: "hero", heading: subject, content: lead ?? "" },
      ...(chart === undefined ? [] : [{ type: "image", image_url: chart, image_alt: capitalize(label(plan)) }]),
      ...(rows.length === 0 ? [] : [{
        type: "list",
        heading: `${capitalize(label(plan))} by ${byWhat(plan, result)}`,
        items: rows.map((row) =>
          `${row.slice(0, -1).map((value, i) => formats[i]!(value)).join(", ")}: ${
            formats[row.length - 1]!(row.at(-1))
          }`
        )
      }]),
      ...(rows.length === 0 && rest.length > 0 ? [{ type: "text", content: rest.join("\n\n") }] : []),
      { type: "divider" },
      { type: "text", content: plainText(signature).replace(/_/g, "") }
    ]
  }
}

/** The offline model: reads the clock for relative periods ("last year"). */
export const make: LanguageModel.LanguageModel.Service = LanguageModel.LanguageModel.of({
  generate: (request) =>
    Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) => Stream.fromIterable(respond(request, new Date(now)))))
})

/** The offline model as a layer. */
export const layer: Layer.Layer<LanguageModel.LanguageModel> = Layer.succeed(LanguageModel.LanguageModel, make)

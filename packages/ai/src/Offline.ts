/**
 * The offline model: the embedded default, with no network and no weights. It is deterministic and
 * honest about what it is. For a question it (see docs/offline-model.md):
 * 0. declines causes, forecasts, intersections and correlations with their reason (`refusals.ts`);
 * 1. answers with a verified query of a reviewed semantic model (the chat's models reach it as data,
 *    `GenerateRequest.semantic`) when the question asks what one asks, saying so first; the cell is
 *    then trusted;
 * 2. reads the question into a semantic query of the connector's model (`reader.ts`: every word
 *    accounted for, or the question declined naming the words it could not place), first looking
 *    up in the data, with list queries, any word that may be a name ("Helix Mini"), and calls
 *    `query_metrics` with it, stating the reading first. It writes no SQL: the compiler does;
 * 3. asks `create_chart` for a chart of the result when it has a label and a value per row, and
 *    when `write_report` is offered (a playbook run), writes a report of the answer;
 * 4. answers in a short paragraph with the numbers, saying it is the offline model.
 *
 * @since 0.1.0
 */
import type * as Investigation from "@sightline/core/Investigation"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as SemanticReading from "@sightline/core/SemanticReading"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Dashboards from "./internal/dashboards.js"
import * as Periods from "./internal/periods.js"
import * as Reader from "./internal/reader.js"
import * as Directives from "./internal/reader/directives.js"
import * as Refusals from "./internal/refusals.js"
import * as Verified from "./internal/verified.js"

/**
 * The provider name of the offline model in the catalogue.
 *
 * @since 0.1.0
 * @category constants
 */
export const provider = "offline"

/**
 * The line every offline answer ends with.
 *
 * @since 0.1.0
 * @category constants
 */
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
const columnFormats = (
  result: QueryResult,
  plain: ReadonlyArray<string> = []
): ReadonlyArray<(value: unknown) => string> =>
  result.columns.map((name, column) => {
    // A customer's number is a name: 1042, not 1,042.
    if (plain.includes(name)) return (value: unknown) => value === null || value === undefined ? "—" : String(value)
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

// A tool's data travels beside its text (`ToolResult`): read, never parsed back from the text.
const structuredOf = (message: LanguageModel.Message | undefined): Record<string, unknown> | undefined =>
  typeof message?.structured === "object" && message.structured !== null
    ? message.structured as Record<string, unknown>
    : undefined

const resultOf = (message: LanguageModel.Message | undefined): QueryResult | undefined => {
  const data = message?.isError === true ? undefined : structuredOf(message)
  return Array.isArray(data?.columns) && Array.isArray(data?.rows) ? data as unknown as QueryResult : undefined
}

/** Why a call failed, or `undefined` when it did not. */
const failureOf = (message: LanguageModel.Message | undefined): string | undefined =>
  message?.isError === true ? String(structuredOf(message)?.error ?? message.content) : undefined

const toolName = (messages: ReadonlyArray<LanguageModel.Message>, callId: string | undefined): string | undefined => {
  for (const message of messages) {
    for (const call of message.toolCalls ?? []) if (call.id === callId) return call.name
  }
  return undefined
}

/**
 * One generation of the offline model.
 *
 * @since 0.1.0
 * @category utils
 */
export const respond = (request: LanguageModel.GenerateRequest, now: Date): ReadonlyArray<LanguageModel.Part> => {
  const messages = request.messages
  const question = [...messages].reverse().find((m) => m.role === "user")?.content ?? ""
  const system = request.system ?? ""
  const offers = (name: string) => request.tools?.some((tool) => tool.name === name) ?? false
  const turn = messages.filter((m) => m.role === "assistant").length

  if (!offers("run_sql") && !offers("query_metrics")) {
    return reply(
      "I can only answer questions about data, and no data connector is enabled in this chat. Add `connector_ids` to the request."
    )
  }
  const asked = Option.getOrElse(Arr.findLastIndex(messages, (m) => m.role === "user"), () => -1)
  // "A sales overview dashboard for 2025 by region": built from the model, as a library change.
  if (offers("build_dashboard") && Dashboards.asks(question)) {
    return dashboarding(request, messages.slice(asked + 1), turn, question, now)
  }
  // Connectors whose schema or model could not be read (the agent's prompt says why).
  const unreadable = system.split("\n").filter((line) => / (?:schema|semantic model) unavailable: /.test(line))
  // A question a verified query asks is answered by it, and the answer is trusted.
  const verified = offers("run_verified_query") ? Verified.match(question, request.semantic ?? []) : undefined
  if (verified !== undefined) {
    return answerWith(request, asked, turn, {
      name: "run_verified_query",
      arguments: {
        name: verified.name,
        connector_id: verified.connectorId,
        ...(Object.keys(verified.params).length === 0 ? {} : { params: verified.params })
      },
      title: verified.question,
      chart: true,
      say: (result) => `${Verified.reading(verified)}\n\n${table(result)}`
    }, messages.slice(asked + 1).flatMap((m) => m.toolCalls ?? []).find((c) => c.name === "run_verified_query"))
  }
  // The connector's semantic model (the library's, or the one derived from its schema) reads the
  // question into a semantic query, after looking up in the data any word it may name ("Helix Mini").
  // The reader may ask the data about a word before it reads the question, round after round: the
  // model's state is the conversation, so it replays its own reading over the turns it made.
  const turns = metricTurns(messages, asked)
  const lookups: Array<LanguageModel.ToolCall> = []
  // The conversation's earlier questions: a follow-up is read against the latest one read.
  const conversation = {
    questions: messages.slice(0, Math.max(asked, 0)).flatMap((m) => m.role === "user" ? [m.content] : []),
    answers: request.earlier ?? []
  }
  let read = offers("query_metrics") ? Reader.read(question, request.semantic ?? [], now, [], conversation) : undefined
  while (read !== undefined && "lookup" in read && lookups.length < turns.flat().length) {
    const round = turns.find((calls) => !lookups.includes(calls[0]!))!
    lookups.push(...round)
    read = Reader.read(question, request.semantic ?? [], now, found(messages, lookups), conversation)
  }
  // After the lookups: the query that answers, then the one that finds where the data is.
  const [main, span] = turns.filter((calls) => !lookups.includes(calls[0]!)).map((calls) => calls[0]!)
  if (read === undefined) {
    // Without a model to read with, causes and forecasts are still declined with their reason.
    const refusal = Refusals.of(question)
    if (refusal !== undefined) return reply(`I can't answer this: ${refusal.reason}.`)
    return reply(
      `I read questions through a connector's semantic model, and none could be read here${
        unreadable.length === 0
          ? ""
          : `: ${unreadable.map((line) => line.replace(/^Connector /, "connector ")).join("; ")}`
      }.`
    )
  }
  if ("declined" in read) return reply(`I can't answer this: ${read.declined}.`)
  if ("clarify" in read) return clarifying(request, messages.slice(asked + 1), turn, read)
  if ("investigate" in read) return investigating(request, messages.slice(asked + 1), turn, read, question)
  if ("lookup" in read) {
    return LanguageModel.callTools(...read.lookup.map((search, i) => ({
      id: `offline_${turn + 1}_${i}`,
      name: "query_metrics",
      arguments: {
        connector_id: search.connectorId,
        metrics: [],
        dimensions: [search.dimension],
        filters: [search.word, ...(search.with ?? [])].map((word) => ({
          dimension: search.dimension,
          operator: "contains",
          values: [word]
        })),
        limit: lookupLimit
      }
    })))
  }
  // A period that held nothing: the metric by year over all time says where the data is, so that
  // "nothing in October 2026" does not read as a quiet month when the data ends in 2025.
  const mainResult = resultOf(resultFor(messages, main))
  const period = read.query.time?.start !== undefined || read.query.time?.end !== undefined ||
    read.query.time?.periods !== undefined
  if (
    mainResult !== undefined && span === undefined && period && read.query.metrics.length > 0 && isEmpty(mainResult)
  ) {
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "query_metrics",
      arguments: { connector_id: read.connectorId, metrics: [read.query.metrics[0]], time: { grain: "year" } }
    })
  }
  const years = resultOf(resultFor(messages, span))
  return answerWith(request, asked, turn, {
    name: "query_metrics",
    arguments: { connector_id: read.connectorId, ...read.query },
    // The question without its instructions ("… Write a short report."): a report's subject.
    title: Directives.split(question).question.trim().split("\n")[0]!,
    chart: read.query.metrics.length > 0 && read.when === undefined,
    say: (result) => `${readAnswer(read, result)}${years === undefined ? "" : whereTheDataIs(read, years)}`
  }, main)
}

/**
 * A request for a dashboard: its tiles read from the request and the model (`dashboards.ts`),
 * filed with `build_dashboard`, then said: what it chose, and the change to review.
 */
const dashboarding = (
  request: LanguageModel.GenerateRequest,
  since: ReadonlyArray<LanguageModel.Message>,
  turn: number,
  question: string,
  now: Date
): ReadonlyArray<LanguageModel.Part> => {
  const planned = Dashboards.plan(question, request.semantic ?? [], now)
  if (planned === undefined || "declined" in planned) {
    return reply(`I can't build this dashboard: ${planned?.declined ?? "it asks for none"}.`)
  }
  const call = since.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === "build_dashboard")
  const result = resultFor(since, call)
  if (call === undefined || result === undefined) {
    return LanguageModel.callTools({ id: `offline_${turn + 1}`, name: "build_dashboard", arguments: planned.arguments })
  }
  const failure = failureOf(result)
  if (failure !== undefined) return reply(`I could not build the dashboard: ${failure}`)
  const built = structuredOf(result) as { path: string; change_number: number; status: string }
  const filed = built.status === "approved"
    ? `It merged at once (change #${built.change_number}): open it under Dashboards.`
    : `It is change #${built.change_number}, for review: it shows under Dashboards once merged.`
  return reply(
    planned.adding
      ? `I added ${planned.chose.join("; ")} to ${built.path}. ${filed}`
      : `I built ${built.path} from the semantic model. I chose ${planned.chose.join("; ")}. ${filed}`
  )
}

/**
 * A question that could mean several things: asked back with `ask_clarification` (each choice a
 * complete question), then said in a sentence with the choices. A run with no one to answer (no
 * such tool) declines, saying what is unclear; it never picks a choice itself.
 */
const clarifying = (
  request: LanguageModel.GenerateRequest,
  // The messages of this answer, after its question.
  since: ReadonlyArray<LanguageModel.Message>,
  turn: number,
  read: Reader.Clarify
): ReadonlyArray<LanguageModel.Part> => {
  const { choices, declined, question } = read.clarify
  if (!(request.tools?.some((tool) => tool.name === "ask_clarification") ?? false)) {
    return reply(`I can't answer this: ${declined}.`)
  }
  const asked = since.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === "ask_clarification")
  const result = resultFor(since, asked)
  if (asked === undefined || result === undefined) {
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "ask_clarification",
      arguments: { question, choices }
    })
  }
  const failure = failureOf(result)
  if (failure !== undefined) return reply(`I can't answer this: ${declined}.`)
  return reply(
    `${question} ${
      choices.map((choice, i) => `(${i + 1}) ${choice.label}`).join(", ")
    }: pick one, or ask in your own words.`
  )
}

/**
 * A question of change or contribution: run as an investigation (`investigate`), then said in its
 * findings' words, where the change is and never why, with the first driver's parts as a table. A
 * run without the tool declines as a cause, as before.
 */
const investigating = (
  request: LanguageModel.GenerateRequest,
  since: ReadonlyArray<LanguageModel.Message>,
  turn: number,
  read: Reader.Investigate,
  question: string
): ReadonlyArray<LanguageModel.Part> => {
  const { connectorId, expected, request: asked } = read.investigate
  if (!(request.tools?.some((tool) => tool.name === "investigate") ?? false)) {
    return reply(
      `I can't answer this: ${
        Refusals.of(question)?.reason ?? "it needs an investigation, which this run cannot make"
      }.`
    )
  }
  const call = since.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === "investigate")
  const result = resultFor(since, call)
  if (call === undefined || result === undefined) {
    return LanguageModel.callTools({
      id: `offline_${turn + 1}`,
      name: "investigate",
      arguments: { connector_id: connectorId, ...asked }
    })
  }
  const failure = failureOf(result)
  if (failure !== undefined) return reply(`I can't answer this: ${failure}.`)
  const found = structuredOf(result) as unknown as Findings
  const words = (name: string) => name.replaceAll("_", " ")
  const period = (p: { readonly start: string; readonly end: string } | undefined) =>
    p === undefined ? "all time" : SemanticReading.periodWords(p.start, p.end)
  const kept = (asked.filters ?? []).map((f) => `${words(f.dimension)} ${f.values.map(String).join(" or ")}`)
  const drivers = [
    ...new Set(found.steps.flatMap((s) => s.level === 1 && s.dimension !== undefined ? [s.dimension] : []))
  ]
  const reading = `I read this as: where ${words(asked.metric)} ${
    found.kind === "change"
      ? `changed from ${period(asked.compared_with)} to ${period(asked.period)}`
      : `comes from in ${period(asked.period)}`
  }${kept.length === 0 ? "" : `, where ${kept.join(" and ")}`}, by ${drivers.map(words).join(", then ")}.`
  // Periods the data holds nothing in ("March" of this year, when the data ends last year) have no
  // change to find.
  if (found.total !== undefined && found.total.before === 0 && found.total.after === 0) {
    return reply(
      `I can't answer this: the data holds no ${words(asked.metric)} in ${period(asked.period)}${
        found.kind === "change" ? ` or ${period(asked.compared_with)}` : ""
      }, so there is no change to find: name a period it covers.`
    )
  }
  // "Why did revenue drop" when it rose: the answer says so first.
  const change = found.total?.change ?? 0
  const contrary = expected === "down" && change > 0
    ? "It did not fall. "
    : expected === "up" && change < 0
    ? "It did not rise. "
    : ""
  const first = found.steps.find((s) =>
    s.level === 1 && s.dimension !== undefined && s.dimension === drivers[0] && s.parts !== undefined
  )
  const table = first === undefined ? "" : `\n\n${partsTable(found.kind, first.dimension!, first.parts!)}`
  // A playbook run: a report of it, its waterfall and the first driver's parts.
  const report = since.flatMap((m) => m.toolCalls ?? []).find((c) => c.name === "write_report")
  if (request.tools?.some((tool) => tool.name === "write_report") === true) {
    if (report === undefined) {
      const title = Directives.split(question).question.trim().split("\n")[0]!.slice(0, 120)
      return LanguageModel.callTools({
        id: `offline_${turn + 1}`,
        name: "write_report",
        arguments: {
          subject: title,
          summary: `${contrary}${found.summary}`,
          blocks: [
            { type: "hero", heading: title, content: `${plainText(reading)} ${contrary}${found.summary}` },
            ...(found.chart === undefined
              ? []
              : [{ type: "image", image_url: found.chart.image_url, image_alt: found.chart.title }]),
            ...(first?.parts === undefined ? [] : [{
              type: "list",
              heading: `By ${first.dimension!.replaceAll("_", " ")}`,
              items: first.parts.map((p) =>
                `${format(p.value)}: ${format(p.before, 2)} to ${format(p.after, 2)} (${format(p.change, 2)})`
              )
            }]),
            { type: "divider" },
            { type: "text", content: plainText(signature).replace(/_/g, "") }
          ]
        }
      })
    }
    const unwritten = failureOf(resultFor(since, report))
    if (unwritten !== undefined) return reply(`The report could not be written: ${unwritten}`)
  }
  return reply(`${reading}\n\n${contrary}${found.summary}${table}`)
}

/** What `investigate` returned: its findings, and the waterfall the run drew for a report. */
type Findings = Investigation.Findings & { readonly chart?: { readonly title: string; readonly image_url: string } }

const partsTable = (
  kind: Findings["kind"],
  dimension: string,
  parts: NonNullable<Findings["steps"][number]["parts"]>
) => {
  const decimals = parts.some((p) => !Number.isInteger(p.before) || !Number.isInteger(p.after)) ? 2 : 0
  const share = (p: { readonly share?: number | undefined }) =>
    p.share === undefined ? "—" : `${(p.share * 100).toFixed(1)}%`
  return kind === "change"
    ? [
      `| ${dimension.replaceAll("_", " ")} | before | after | change | share of the change |`,
      "| --- | --- | --- | --- | --- |",
      ...parts.map((p) =>
        `| ${format(p.value)} | ${format(p.before, decimals)} | ${format(p.after, decimals)} | ${
          format(p.change, decimals)
        } | ${share(p)} |`
      )
    ].join("\n")
    : [
      `| ${dimension.replaceAll("_", " ")} | figure |`,
      "| --- | --- |",
      ...parts.map((p) => `| ${format(p.value)} | ${format(p.after, decimals)} |`)
    ].join("\n")
}

/**
 * This answer's `query_metrics` calls, turn by turn: the rounds of lookups the reader asked for, then
 * the query that answers, then the one that finds where the data is after a period held nothing.
 */
const metricTurns = (
  messages: ReadonlyArray<LanguageModel.Message>,
  asked: number
): ReadonlyArray<ReadonlyArray<LanguageModel.ToolCall>> =>
  messages.slice(asked + 1).flatMap((m) => {
    const calls = m.role === "assistant" ? (m.toolCalls ?? []).filter((c) => c.name === "query_metrics") : []
    return calls.length === 0 ? [] : [calls]
  })

/** The `tool` message answering a call. */
const resultFor = (messages: ReadonlyArray<LanguageModel.Message>, call: LanguageModel.ToolCall | undefined) =>
  call === undefined ? undefined : messages.find((m) => m.role === "tool" && m.toolCallId === call.id)

/** Whether a result holds nothing: no rows, or one figure that is empty or zero. */
const isEmpty = (result: QueryResult): boolean =>
  result.rows.length === 0 ||
  (result.rows.length === 1 && result.columns.length === 1 && (result.rows[0]![0] === null || result.rows[0]![0] === 0))

/** The years a metric has figures in, said after an empty answer: "The data has orders in 2023 to 2025." */
const whereTheDataIs = (read: Reader.Read, years: QueryResult): string => {
  const held = years.rows.filter((row) => row[1] !== null && row[1] !== 0).map((row) => String(row[0]).slice(0, 4))
  const metric = read.query.metrics[0]!.replaceAll("_", " ")
  if (held.length === 0) return `\n\nThere are no ${metric} at all.`
  // Only a period outside the years with figures is said to be: a quiet month within them is news.
  const { end, start } = read.query.time ?? {}
  const [first, last] = [held[0]!, held.at(-1)!]
  const outside = (start !== undefined && start >= `${Number(last) + 1}-01-01`) ||
    (end !== undefined && end <= `${first}-01-01`)
  if (!outside) return ""
  return `\n\nThe data has ${metric} in ${
    first === last ? first : `${first} to ${last}`
  }: ask about a period within it.`
}

/** The most values a lookup reads. */
const lookupLimit = 20

/** What this answer's lookups found: each call's word and dimension, and the values it returned. */
const found = (
  messages: ReadonlyArray<LanguageModel.Message>,
  lookups: ReadonlyArray<LanguageModel.ToolCall>
): ReadonlyArray<Reader.Found> =>
  lookups.flatMap((call) => {
    const result = resultFor(messages, call)
    if (result === undefined) return []
    try {
      // The call's arguments are the offline model's own (JSON it wrote); the result is data.
      const args = JSON.parse(call.arguments)
      const failed = failureOf(result)
      const words = (args.filters as ReadonlyArray<{ readonly values: ReadonlyArray<unknown> }>)
        .map((filter) => String(filter.values[0]))
      return [{
        connectorId: Number(args.connector_id),
        dimension: String(args.dimensions[0]),
        word: words[0]!,
        ...(words.length > 1 ? { with: words.slice(1) } : {}),
        values: (resultOf(result)?.rows ?? []).map((row) => String(row[0])),
        ...(failed === undefined ? {} : { failed })
      }]
    } catch {
      return []
    }
  })

/** A tool that answers the question in one call: what to call, and how to say its result. */
interface OneCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
  /** The chart's and the report's title. */
  readonly title: string
  /** Whether a result of a label and a value per row is charted (a list of names is not). */
  readonly chart: boolean
  readonly say: (result: QueryResult & { readonly reading?: string }) => string
}

/** The turns of a question one tool call answers: call it, chart the result, report it, then say it. */
const answerWith = (
  request: LanguageModel.GenerateRequest,
  asked: number,
  turn: number,
  call: OneCall,
  // The call already made for it, if any.
  made: LanguageModel.ToolCall | undefined
): ReadonlyArray<LanguageModel.Part> => {
  const messages = request.messages
  const offers = (name: string) => request.tools?.some((tool) => tool.name === name) ?? false
  const ran = resultFor(messages, made)
  if (ran === undefined) {
    return LanguageModel.callTools({ id: `offline_${turn + 1}`, name: call.name, arguments: call.arguments })
  }
  const failure = failureOf(ran)
  if (failure !== undefined) return reply(`The query failed: ${failure}`)
  const result = resultOf(ran) as (QueryResult & { readonly reading?: string }) | undefined
  if (result === undefined) return reply("The query returned nothing I can read.")
  const title = call.title.slice(0, 200)
  const last = messages.at(-1)
  const lastTool = last?.role === "tool" ? toolName(messages, last.toolCallId) : undefined
  const text = call.say(result)
  if (
    lastTool === call.name && call.chart && offers("create_chart") && result.columns.length >= 2 &&
    result.rows.length >= 2
  ) {
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
    const chart = lastTool === "create_chart" ? chartUrl(last) : undefined
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
  const unwritten = lastTool === "write_report" ? failureOf(last) : undefined
  if (unwritten !== undefined) return reply(`The report could not be written: ${unwritten}`)
  return reply(text)
}

/** What a follow-up kept of the reading before it and what it changed: "Keeping units and 2024; now by category." */
const followedWords = (followed: Reader.Followed): string => {
  const kept = followed.kept.length === 0 ? "" : `Keeping ${followed.kept.join(", ")}`
  const changed = followed.changed.length === 0 ? "" : `now ${followed.changed.join(", ")}`
  const said = [kept, changed].filter((part) => part !== "").join("; ")
  return `${said.charAt(0).toUpperCase()}${said.slice(1)}, from "${followed.question}".`
}

/**
 * The answer to a question read into a semantic query: the reading first (and any word taken for
 * another), the leader of a ranking, then the figures.
 */
const readAnswer = (read: Reader.Read, result: QueryResult & { readonly reading?: string }): string => {
  const corrected = read.corrections.length === 0
    ? ""
    : ` (I took ${read.corrections.map(([said, as]) => `"${said}" for "${as}"`).join(", ")}.)`
  const assumed = read.assumed === undefined
    ? ""
    : ` (The question names no measure: I ranked by ${read.assumed.replaceAll("_", " ")}.)`
  const directed = read.directives === undefined
    ? ""
    : ` (I took ${read.directives.map((d) => `"${d}"`).join(", ")} as how to present the answer.)`
  const followed = read.followed === undefined ? "" : ` (${followedWords(read.followed)})`
  const noted = (read.notes ?? []).map((note) => ` (${note}.)`).join("")
  const reading = `I read this as: ${
    result.reading ?? "the semantic query shown"
  }.${followed}${corrected}${assumed}${noted}${directed}`
  if (result.rows.length === 0) return `${reading}\n\nNothing matched.`
  const formats = columnFormats(result, read.identifiers)
  const first = result.rows[0]!
  const valueAt = result.columns.length - 1
  if (read.when !== undefined) {
    const metric = read.query.metrics[0]!.replaceAll("_", " ")
    return `${reading}\n\nThe ${read.when} day with ${metric} was **${String(first[0]).slice(0, 10)}** (${
      formats[valueAt]!(first[valueAt])
    }).`
  }
  // A list is its rows.
  if (read.query.metrics.length === 0) {
    return `${reading}\n\n${
      result.truncated || result.row_count >= (read.query.limit ?? Infinity) ? "The first " : ""
    }**${format(result.row_count)}**:\n\n${table(result, read.identifiers)}`
  }
  if (result.rows.length === 1 && result.columns.length === 1) {
    const value = result.rows[0]![0]
    return value === null || value === undefined
      ? `${reading}\n\nNothing was recorded.`
      : `${reading}\n\n**${formats[0]!(value)}**`
  }
  // "Orders of Priya Okafor": how many rows bear the name, each on its own.
  if (read.named !== undefined) {
    const { dimension, identifier, value } = read.named
    const what = dimension.replaceAll("_", " ")
    return `${reading}\n\n${
      result.rows.length === 1
        ? `One ${what} is named ${value}`
        : `**${result.rows.length}** ${what}s are named ${value}; they are told apart by ${
          identifier.replaceAll("_", " ")
        }`
    }:\n\n${table(result, read.identifiers)}`
  }
  const order = read.query.order?.[0]
  const named = `**${first.slice(0, valueAt).map((value, i) => formats[i]!(value)).join(", ")}**`
  // One group is said whole; a ranking says its leader.
  const lead = result.rows.length === 1
    ? `${named}: **${formats[valueAt]!(first[valueAt])}**.\n\n`
    : order === undefined || first[valueAt] === null
    ? ""
    : `${named} ${order.direction === "asc" ? "is lowest" : "leads"} with **${formats[valueAt]!(first[valueAt])}**.\n\n`
  return `${reading}\n\n${lead}${table(result, read.identifiers)}`
}

/** A result as a Markdown table (the first rows of it). */
const table = (result: QueryResult, plain?: ReadonlyArray<string>): string => {
  const formats = columnFormats(result, plain)
  const rows = result.rows.slice(0, 20)
  return [
    `| ${result.columns.join(" | ")} |`,
    `| ${result.columns.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map((value, i) => formats[i]!(value)).join(" | ")} |`),
    // A result cut at the row cap says so: "9,975 more" reads as all there are.
    ...(result.row_count > rows.length
      ? [
        `\n${format(result.row_count - rows.length)} more rows in the table${
          result.truncated ? `; the query stopped at ${format(result.row_count)} rows, and there are more` : ""
        }.`
      ]
      : [])
  ].join("\n")
}

// The `image_url` that `create_chart` answered with (`{"image_url":"chart:1"}`).
const chartUrl = (message: LanguageModel.Message | undefined): string | undefined => {
  const url = structuredOf(message)?.image_url
  return typeof url === "string" ? url : undefined
}

const plainText = (markdown: string): string => markdown.replace(/\*\*/g, "")

/**
 * The offline model: reads the clock for relative periods ("last year").
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: LanguageModel.LanguageModel.Service = LanguageModel.LanguageModel.of({
  generate: (request) =>
    Stream.unwrap(Effect.map(Clock.currentTimeMillis, (now) => Stream.fromIterable(respond(request, new Date(now)))))
})

/**
 * The offline model as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<LanguageModel.LanguageModel> = Layer.succeed(LanguageModel.LanguageModel, make)

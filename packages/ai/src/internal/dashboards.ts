/**
 * The offline model's dashboards: a request for one ("a sales overview dashboard for 2025 by region
 * and channel") read into the tiles `build_dashboard` files, or a request to add to one ("add
 * returns by category to the sales dashboard"). What it measures and breaks down by is read by the
 * same reader as a question; what the request leaves open comes from the semantic model: its
 * currency metric first, and its drivers as the main dimensions.
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import type * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as SemanticReading from "@sightline/core/SemanticReading"
import * as Reader from "./reader.js"

/** What `build_dashboard` is called with, and what the answer says was chosen. */
export interface Plan {
  readonly arguments: {
    readonly connector_id: number
    readonly name: string
    readonly title?: string
    readonly description?: string
    readonly filters?: {
      readonly dimensions?: ReadonlyArray<{ readonly dimension: string }>
      readonly time?: SemanticQuery.TimeSelection
    }
    readonly tiles: ReadonlyArray<{
      readonly title: string
      readonly query: { readonly semantic: SemanticQuery.SemanticQuery }
      readonly visualization: { readonly type: string; readonly compare?: "previous_period" }
    }>
  }
  /** The choices, in words: "revenue as a figure with its change on the period before, …". */
  readonly chose: ReadonlyArray<string>
  readonly adding: boolean
}

const dashboardWord = /\bdash ?boards?\b/i

/** Does the question ask for a dashboard? */
export const asks = (question: string): boolean => dashboardWord.test(question)

const slug = (words: string) =>
  words.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64) || "overview"

const words = (name: string) => name.replaceAll("_", " ").replace(/^\w+\./, "")
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

// Requests' own words, which name no data.
const asking =
  /^\s*(?:please\s+|can you\s+|could you\s+)?(?:build|make|create|set up|give me|show me|draw|prepare|i want|i need)?\s*(?:me\s+)?(?:an?\s+|the\s+|my\s+)?/i
const filler = /\b(?:overview|summary|report|page|view|with|showing|of the|please)\b/gi

/**
 * The tool call a dashboard request makes, or why it cannot (`declined`). `undefined` when the
 * question asks for no dashboard.
 */
export const plan = (
  question: string,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>,
  now: Date
): Plan | { readonly declined: string } | undefined => {
  if (!asks(question)) return undefined
  const reviewed = semantic.filter((context) => context.reviewed)
  if (reviewed.length === 0) {
    return { declined: "a dashboard is built on a semantic model of the library, and no connector here has one" }
  }
  const added = /\badd\b\s+(.+?)\s+to\s+(?:the\s+|my\s+|our\s+)?(.+?)\s+dash ?board\b/i.exec(question) ?? undefined
  const subject = added?.[2] ??
    question.replace(dashboardWord, " ").replace(asking, "").split(/\s+(?:for|by|in|over|per|of)\s+/i)[0]!.trim()
  const name = slug(subject.replace(filler, " "))
  const wanted = (added?.[1] ?? question.replace(dashboardWord, " ").replace(asking, ""))
    .replace(filler, " ").replace(/\s+/g, " ").trim()
  const read = wanted === "" ? undefined : Reader.read(wanted, reviewed, now)
  const query = read !== undefined && "query" in read ? read.query : undefined
  const context =
    reviewed.find((c) => read !== undefined && "connectorId" in read && c.connector_id === read.connectorId) ??
      reviewed[0]!
  const model = context.model
  const measures = model.tables.flatMap((table) => table.measures ?? [])
  // What to measure: what the request names, else the model's money, else its first measure.
  const metrics = query !== undefined && query.metrics.length > 0
    ? query.metrics.slice(0, 3)
    : [...measures.filter((m) => m.format === "currency"), ...measures].slice(0, 1).map((m) => m.name)
  if (metrics.length === 0) return { declined: `the semantic model ${model.name} has no metric to show` }
  if (added !== undefined && query === undefined) {
    return { declined: `I could not read "${added[1]}" as metrics and dimensions of the model ${model.name}` }
  }
  const dimensions = query?.dimensions !== undefined && query.dimensions.length > 0
    ? query.dimensions
    : added === undefined
    ? (model.drivers ?? []).slice(0, 2)
    : []
  const period = query?.time?.start !== undefined && query.time.end !== undefined
    ? { start: query.time.start, end: query.time.end }
    : undefined
  const filters = query?.filters ?? []
  const narrowed = filters.length === 0 ? {} : { filters }
  const first = metrics[0]!
  const by = (dims: ReadonlyArray<string>) => dims.map(words).join(" and ")
  if (added !== undefined) {
    // One tile: the request as it reads.
    const type = dimensions.length === 0
      ? (query?.time?.grain === undefined ? "figure" : "line")
      : dimensions.length === 1
      ? "bar"
      : "stacked_bar"
    const title = sentence(`${metrics.map(words).join(", ")}${dimensions.length === 0 ? "" : ` by ${by(dimensions)}`}`)
    return {
      adding: true,
      chose: [`${title} as a ${type.replace("_", " ")}`],
      arguments: {
        connector_id: context.connector_id,
        name,
        tiles: [{ title, query: { semantic: { ...query!, metrics } } as const, visualization: { type } }]
      }
    }
  }
  const tiles: Array<Plan["arguments"]["tiles"][number]> = [
    ...metrics.map((metric) => ({
      title: sentence(words(metric)),
      query: { semantic: { metrics: [metric], ...narrowed } },
      visualization: period === undefined ? { type: "figure" } : { type: "figure", compare: "previous_period" as const }
    })),
    {
      title: sentence(`${words(first)} by month`),
      query: { semantic: { metrics: [first], time: { grain: "month" as const }, ...narrowed } },
      visualization: { type: "line" }
    },
    ...dimensions.map((dimension) => ({
      title: sentence(`${words(first)} by ${words(dimension)}`),
      query: { semantic: { metrics: [first], dimensions: [dimension], ...narrowed } },
      visualization: { type: "bar" }
    })),
    ...(dimensions.length === 0 ? [] : [{
      title: sentence(`${metrics.map(words).join(", ")} by ${by(dimensions)}`),
      query: { semantic: { metrics, dimensions, ...narrowed } },
      visualization: { type: "table" }
    }])
  ]
  const title = sentence(subject.replace(filler, " ").replace(/\s+/g, " ").trim() || "Overview")
  return {
    adding: false,
    chose: [
      `${metrics.map(words).join(", ")} as ${metrics.length === 1 ? "a figure" : "figures"}${
        period === undefined ? "" : " with the change on the period before"
      }`,
      `${words(first)} by month for the trend`,
      ...(dimensions.length === 0 ? [] : [
        `${words(first)} by ${dimensions.map(words).join(", then by ")}${
          query?.dimensions?.length ? "" : ` (the model's main dimensions)`
        }`,
        `a table of ${metrics.map(words).join(", ")} by ${by(dimensions)}`
      ])
    ],
    arguments: {
      connector_id: context.connector_id,
      name,
      title: `${title}${period === undefined ? "" : `, ${SemanticReading.periodWords(period.start, period.end)}`}`
        .slice(0, 200),
      description: `Built by the offline model from: ${question.trim()}`.slice(0, 1_000),
      filters: {
        ...(dimensions.length === 0 ? {} : { dimensions: dimensions.map((dimension) => ({ dimension })) }),
        ...(period === undefined ? {} : { time: period })
      },
      tiles
    }
  }
}

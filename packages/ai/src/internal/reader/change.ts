/**
 * Questions of change and contribution, read before any phase: "why did revenue drop in March",
 * "what drove the growth in units last year", "where are returns coming from". What is left once
 * their words are taken out ("revenue in March") is read as any question, and its reading becomes
 * an investigation (`Investigation`): the metric, its filters, the period and the one before it.
 * The answer says where the change is; a cause the data cannot show is still not claimed.
 *
 * @internal
 */
import type * as Investigation from "@sightline/core/Investigation"
import type * as LanguageModel from "@sightline/core/LanguageModel"
import * as Periods from "../periods.js"
import type { Declined, Read } from "./reading.js"

/** A question of change or contribution: the rest to read, and what it expects. */
export interface Asked {
  readonly rest: string
  readonly kind: "change" | "contribution"
  /** The direction the question says the change went ("drop": down), which the answer checks. */
  readonly expected?: "up" | "down" | undefined
}

/** An investigation to run on a connector, from a question's reading. */
export interface Investigate {
  readonly investigate: {
    readonly connectorId: number
    readonly request: Omit<Investigation.InvestigationRequest, "connector_id">
    readonly expected?: "up" | "down" | undefined
  }
}

const down = "drop|dropped|drops|fall|fell|fallen|falls|decline[sd]?|declining|decrease[sd]?|go down|gone down|" +
  "went down|dip|dipped|dips|slip|slipped|slips|shrink|shrank|shrunk|slump|slumped|plunge[sd]?|sink|sank|tank|tanked"
const up = "rise|rose|risen|rises|grow|grew|grown|grows|increase[sd]?|go up|gone up|went up|jump|jumped|jumps|" +
  "spike[sd]?|climb|climbed|climbs|surge[sd]?|soar|soared|improve[sd]?"
const moved = "change[sd]?|move[sd]?|swing|swung|vary|varied|shift|shifted"
const downNouns = "drop|fall|decline|decrease|dip|slump|slowdown"
const upNouns = "growth|rise|increase|jump|spike|surge|improvement"
const movedNouns = "change|swing|shift|movement"

const verb = new RegExp(
  `^(?:why|how come)\\s+(?:did|has|have|was|were|is|are|do|does|had)\\s+(?:our\\s+|the\\s+)?(.+?)\\s+` +
    `(${down}|${up}|${moved})\\b(.*)$`
)
const driven = new RegExp(
  `^(?:(?:what|which\\s+(\\w+))\\s+(?:drove|drives|drive|caused|causes|explain|explains|explained|is behind|was behind|` +
    `were behind|are behind|led to|leads to)|explain|break down)\\s+(?:the\\s+|our\\s+|this\\s+|that\\s+)?(?:(.+?)\\s+)?` +
    `(${downNouns}|${upNouns}|${movedNouns})s?\\b(?:\\s+(?:in|of))?(.*)$`
)
// "What changed in revenue last week", "how did orders change in Q3": a change with no direction.
const changedIn =
  /^(?:what\s+changed\s+(?:in|for|with)\s+(.+)|how\s+(?:did|has|have|do|does)\s+(.+?)\s+change[sd]?\b(.*))$/
const from =
  /^where\s+(?:are|is|do|does|did|were|was)\s+(?:our\s+|the\s+|all\s+)?(.+?)\s+(?:coming|come|came)\s+from\b(.*)$/

const direction = (word: string): "up" | "down" | undefined =>
  new RegExp(`^(?:${down}|${downNouns})$`).test(word)
    ? "down"
    : new RegExp(`^(?:${up}|${upNouns})$`).test(word)
    ? "up"
    : undefined

// "From Q1 to Q2", "between March and April" in a question of change compares the two, not the
// range that runs through them.
const fromTo = new RegExp(
  "\\b(?:from|between)\\s+((?:q[1-4]|h[12]|jan\\w*|feb\\w*|mar\\w*|apr\\w*|may|jun\\w*|jul\\w*|aug\\w*|" +
    "sep\\w*|oct\\w*|nov\\w*|dec\\w*|(?:19|20)\\d{2}|(?:last|this|previous) \\w+)(?:\\s+(?:19|20)\\d{2})?)\\s+(?:to|and)\\s+"
)
const compared = (rest: string) => rest.replace(fromTo, "$1 vs ")

/** The question of change or contribution a question asks, if any. */
export const of = (question: string): Asked | undefined => {
  const q = question.toLowerCase().replace(/[’‘]/g, "'").replace(/[?!.]+\s*$/, "").trim()
  const byVerb = verb.exec(q)
  if (byVerb !== null) {
    return { rest: compared(`${byVerb[1]}${byVerb[3]}`.trim()), kind: "change", expected: direction(byVerb[2]!) }
  }
  const byDriver = driven.exec(q)
  if (byDriver !== null) {
    // "Which categories drove…" names the driver: read as "… by categories".
    const by = byDriver[1] === undefined ? "" : ` by ${byDriver[1]}`
    return {
      rest: compared(`${byDriver[2] ?? ""} ${byDriver[4]}${by}`.trim()),
      kind: "change",
      expected: direction(byDriver[3]!)
    }
  }
  const changed = changedIn.exec(q)
  if (changed !== null) {
    return { rest: compared((changed[1] ?? `${changed[2]}${changed[3]}`).trim()), kind: "change" }
  }
  const byOrigin = from.exec(q)
  if (byOrigin !== null) return { rest: `${byOrigin[1]}${byOrigin[2]}`.trim(), kind: "contribution" }
  return undefined
}

/**
 * The investigation a reading of the rest comes to: its first metric (the measure of a comparison
 * of periods: "growth in revenue" is revenue's change), its filters, its breakdown as the drivers, and
 * its period against the one before it (of the same length; two periods compared are those two).
 */
export const investigation = (
  asked: Asked,
  read: Read,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>
): Investigate | Declined => {
  const { query } = read
  const named = query.metrics[0]
  if (named === undefined) {
    return {
      declined:
        "it asks where a change is, and names no measure: name one, for example \"why did revenue drop in March 2025\""
    }
  }
  const model = semantic.find((c) => c.connector_id === read.connectorId)?.model
  // "Revenue growth" changes as revenue does; a share is investigated as itself (and refused).
  const derived = model?.metrics?.find((m) => m.name === named)
  const metric = derived?.type === "period_over_period" ? derived.measure : named
  const time = query.time
  const periods = time?.periods
  const window = periods !== undefined
    ? { start: periods.at(-1)!.start, end: periods.at(-1)!.end }
    : time?.start !== undefined && time.end !== undefined
    ? { start: time.start, end: time.end }
    : undefined
  const before = periods !== undefined
    ? periods[0]
    : window === undefined
    ? undefined
    : Periods.previous(window)
  if (asked.kind === "change" && (window === undefined || before === undefined)) {
    return {
      declined: "it asks where a change is, and names no period to compare with the one before: name one, for " +
        `example "why did ${metric.replaceAll("_", " ")} drop in March 2025"`
    }
  }
  const drivers = (query.dimensions ?? []).filter((d) => !(read.identifiers ?? []).includes(d))
  return {
    investigate: {
      connectorId: read.connectorId,
      request: {
        metric,
        ...(window === undefined ? {} : { period: window }),
        ...(asked.kind === "change" ? { compared_with: before! } : {}),
        ...(drivers.length === 0 ? {} : { drivers }),
        ...(query.filters === undefined || query.filters.length === 0 ? {} : { filters: query.filters })
      },
      ...(asked.expected === undefined ? {} : { expected: asked.expected })
    }
  }
}

/**
 * "Customers who bought both laptops and phones": a condition on an entity, not on rows. The
 * question is read with "laptops or phones" in place of "both laptops and phones"; the two values it
 * keeps to, of one dimension, become the query's `having_each` on the entity the question names
 * (a table of the model with a primary key), and the rows are then all of theirs.
 *
 * @internal
 */
import type * as LanguageModel from "@sightline/core/LanguageModel"
import type { Declined, Read } from "./reading.js"

/** The words that may name the entity, and the question with "both A and B" read as "A or B". */
export interface Asked {
  /** The words before "both", nearest first: "customers" in "how many customers bought both". */
  readonly before: ReadonlyArray<string>
  readonly rest: string
  /** "Which customers…": the entities are listed, not counted. */
  readonly listed: boolean
}

const both = /\bboth\s+(.+?)\s+and\s+/

/** The question of an entity with rows in each of two values, if it asks one. */
export const of = (question: string): Asked | undefined => {
  const q = question.toLowerCase().replace(/[’‘]/g, "'").replace(/[?!.]+\s*$/, "").trim()
  const found = both.exec(q)
  if (found === null || found.index === 0) return undefined
  return {
    before: q.slice(0, found.index).trim().split(/\s+/).reverse().slice(0, 5),
    rest: q.replace(both, "$1 or "),
    listed: /^(?:(?:which|list|show(?:\s+me)?(?:\s+the)?|name|who are(?:\s+the)?)\s+[a-z]+|[a-z]+\s+(?:who|that))\b/
      .test(q)
  }
}

const singular = (word: string) => word.replace(/ies$/, "y").replace(/s$/, "")

/**
 * The reading of the rest, its two values of one dimension kept as the entity's condition; a
 * decline where the rest keeps to no such pair, or names no table of the model.
 */
export const apply = (
  asked: Asked,
  read: Read,
  semantic: ReadonlyArray<LanguageModel.SemanticContext>
): Read | Declined => {
  const model = semantic.find((c) => c.connector_id === read.connectorId)?.model
  const table =
    asked.before.flatMap((word) =>
      model?.tables.filter((t) =>
        (t.primary_key?.columns.length ?? 0) === 1 && singular(t.name.toLowerCase()) === singular(word)
      ) ?? []
    )[0]
  const pair = (read.query.filters ?? []).find((f) =>
    (f.operator === "in" || f.operator === "=") && f.values.length === 2
  )
  if (table === undefined || pair === undefined) {
    return {
      declined: "it asks for the rows that have both of two things, and I could not read " +
        (table === undefined
          ? `whose rows: none of "${[...asked.before].reverse().join(" ")}" names a table of the model`
          : "the two as values of one dimension") +
        ": ask about each on its own"
    }
  }
  // The pair's dimension is a condition now, not a breakdown.
  const dimensions = (read.query.dimensions ?? []).filter((d) => d !== pair.dimension)
  const name = (table.dimensions ?? []).find((d) => singular(d.name) === singular(table.name)) ??
    table.dimensions?.[0]
  const { dimensions: _dimensions, filters: _filters, metrics: _metrics, ...query } = read.query
  // "Revenue from customers who…": the entity's word names whose rows, not a count of them beside.
  const metrics = read.query.metrics.length > 1
    ? read.query.metrics.filter((m) => !m.toLowerCase().includes(singular(table.name.toLowerCase())))
    : read.query.metrics
  const filters = (read.query.filters ?? []).filter((f) => f !== pair)
  return {
    ...read,
    query: {
      ...query,
      ...(asked.listed && name !== undefined
        ? { metrics: [], dimensions: [name.name] }
        : dimensions.length === 0
        ? { metrics }
        : { metrics, dimensions }),
      ...(filters.length === 0 ? {} : { filters }),
      having_each: { entity: table.name, dimension: pair.dimension, values: pair.values }
    }
  }
}

/**
 * A semantic model read off a connector's schema, for connectors the library has no model for:
 * every table a logical table, numeric columns summed as measures, a row count per table, text and
 * boolean columns as dimensions (with the values their comments list), dates and timestamps as
 * time dimensions, and foreign keys as many-to-one relationships. It is a starting point that a
 * person refines and files into the library (`GET /v2/connectors/{id}/semantic-model` returns it).
 *
 * @since 0.1.0
 */
import type * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import type * as SemanticModel from "./SemanticModel.js"

/**
 * Column types by kind, as introspection names them in PostgreSQL and MySQL.
 *
 * @since 0.1.0
 * @category constants
 */
export const numericType = /int|numeric|decimal|real|double|float|money/i
export const timeType = /date|time/i
export const textType = /char|text|string|enum/i
export const booleanType = /^bool|^tinyint\(1\)/i

// A value a comment may list: words, numbers and a few joining marks; never a quote or a backslash,
// so that it is written into a query as a plain string literal in either dialect.
const listableValue = /^[\p{L}\p{N}][\p{L}\p{N} _&.-]{0,39}$/u

/**
 * A text column, and the values its table's comment lists for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listed {
  readonly table: ConnectorRuntime.Table
  readonly column: ConnectorRuntime.Column
  readonly values: ReadonlyArray<string>
}

/**
 * The values of text columns that comments list: a table's comment "status is completed, shipped
 * or cancelled" (one clause per `;`), or a column's comment "one of Consumer, Business" (or "segment
 * is Consumer or Business", its own name). At least two values, so that prose ("price is in USD")
 * is not read as a list.
 *
 * @since 0.1.0
 * @category utils
 */
export const listedValues = (table: ConnectorRuntime.Table): ReadonlyArray<Listed> => {
  const listed: Array<Listed> = []
  // Split on commas and "or" only: "Research and Development" is one value.
  const valuesOf = (text: string) =>
    text.split(/\s*,\s*|\s+or\s+/).map((value) => value.trim().replace(/^["'`]|["'`]$/g, ""))
  const add = (column: ConnectorRuntime.Column | undefined, values: ReadonlyArray<string>) => {
    if (column === undefined || !textType.test(column.type) || values.length < 2) return
    if (!values.every((value) => listableValue.test(value))) return
    listed.push({ table, column, values })
  }
  for (const clause of (table.comment ?? "").split(/[;\n]/)) {
    const match = /^\s*([a-z_][a-z0-9_]*) (?:is|are) (?:one of )?(.+?)\.?\s*$/i.exec(clause)
    if (match !== null) add(table.columns.find((c) => c.name === match[1]!.toLowerCase()), valuesOf(match[2]!))
  }
  // A column's own comment: "one of active, cancelled", or "status is active, cancelled or trialing".
  for (const column of table.columns) {
    const match = /^\s*(?:one of:?|([a-z_][a-z0-9_]*) (?:is|are)(?: one of:?)?) (.+?)\.?\s*$/i.exec(
      column.comment ?? ""
    )
    if (match !== null && (match[1] === undefined || match[1].toLowerCase() === column.name)) {
      add(column, valuesOf(match[2]!))
    }
  }
  return listed
}

/**
 * What a column's comment calls it: the words before the first "of", "in", "for" or punctuation
 * ("revenue of the order in USD" is revenue), when they are one to four words; a synonym of its
 * measure, so that a question may use the schema's own word for it.
 *
 * @since 0.1.0
 * @category utils
 */
export const commentHead = (comment: string): string | undefined => {
  const head = comment.split(
    /(?:^|\s+)(?:of|in|for|per|from|on|at|by|after|before|including|excluding)\b|[,;.:()]/i
  )[0]!
    .trim().toLowerCase()
  const words = head.split(/\s+/).filter((w) => w.length > 0)
  return words.length >= 1 && words.length <= 4 && words.every((w) => /^[a-z][a-z0-9-]*$/.test(w)) ? head : undefined
}

const nameOf = (text: string): string => {
  const cleaned = text.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "")
  return /^[a-z_]/.test(cleaned) ? cleaned : `t_${cleaned}`
}

// Words that cannot stand bare as a column in SQL, and that tables do use as column names.
const reserved = new Set([
  "all",
  "and",
  "any",
  "as",
  "asc",
  "both",
  "by",
  "case",
  "check",
  "column",
  "constraint",
  "default",
  "desc",
  "distinct",
  "do",
  "else",
  "end",
  "false",
  "for",
  "from",
  "grant",
  "group",
  "having",
  "in",
  "index",
  "into",
  "is",
  "key",
  "limit",
  "not",
  "null",
  "offset",
  "on",
  "or",
  "order",
  "primary",
  "range",
  "references",
  "select",
  "table",
  "then",
  "to",
  "true",
  "union",
  "user",
  "using",
  "values",
  "when",
  "where",
  "window",
  "with"
])

const split = (qualified: string): { schema?: string; table: string } => {
  const at = qualified.lastIndexOf(".")
  return at < 0 ? { table: qualified } : { schema: qualified.slice(0, at), table: qualified.slice(at + 1) }
}

/**
 * The model of a schema, for the connector named `connector`; none for a schema without tables.
 *
 * @since 0.1.0
 * @category utils
 */
export const derive = (
  connector: string,
  schema: ConnectorRuntime.SchemaInfo
): SemanticModel.SemanticModelFile | undefined => {
  // A column as SQL: bare where it is a plain lowercase name, else quoted as the dialect quotes (a
  // column's name is the database's, which a tenant chose: it is never pasted into SQL as it is).
  const quote = SemanticCompiler.dialect(schema.dialect).quote
  const sqlOf = (column: string) => /^[a-z_][a-z0-9_]*$/.test(column) && !reserved.has(column) ? column : quote(column)
  // Logical names: the table's own name, or schema_table where two schemas share it.
  const short = schema.tables.map((t) => nameOf(split(t.name).table))
  const logical = new Map(
    schema.tables.map((t, i) =>
      [t.name, short.filter((s) => s === short[i]).length > 1 ? nameOf(t.name) : short[i]!] as const
    )
  )
  // Measure names are unique in a model: a column's name, or table_column where two tables share it.
  const numericColumns = schema.tables.flatMap((t) =>
    t.columns.filter((c) =>
      numericType.test(c.type) && !c.primaryKey && c.references === undefined && !booleanType.test(c.type)
    )
      .map((c) => nameOf(c.name))
  )
  const tables = schema.tables.map((table): SemanticModel.Table => {
    const name = logical.get(table.name)!
    const listed = listedValues(table)
    const dimensions: Array<SemanticModel.Dimension> = []
    const timeDimensions: Array<SemanticModel.TimeDimension> = []
    const measures: Array<SemanticModel.Measure> = [{
      name: numericColumns.includes(`${name}_count`) ? `${name}_rows` : `${name}_count`,
      agg: "count",
      format: "integer",
      description: `number of ${name.replaceAll("_", " ")} rows`
    }]
    for (const column of table.columns) {
      if (column.primaryKey || column.references !== undefined) continue
      const field = nameOf(column.name)
      const description = column.comment === undefined ? {} : { description: column.comment }
      const expr = field === sqlOf(column.name) ? {} : { expr: sqlOf(column.name) }
      if (booleanType.test(column.type) || textType.test(column.type)) {
        const values = listed.find((l) => l.column === column)?.values
        dimensions.push({
          name: field,
          ...expr,
          data_type: column.type,
          ...description,
          ...(values === undefined ? {} : { values: values.map((value) => ({ value })) })
        })
      } else if (timeType.test(column.type)) {
        timeDimensions.push({
          name: field,
          ...expr,
          data_type: /^date$/i.test(column.type) ? "DATE" : column.type,
          ...description
        })
      } else if (numericType.test(column.type)) {
        const synonym = column.comment === undefined ? undefined : commentHead(column.comment)
        measures.push({
          name: numericColumns.filter((c) => c === field).length > 1 ? `${name}_${field}` : field,
          agg: "sum",
          expr: sqlOf(column.name),
          ...description,
          ...(synonym === undefined || synonym === field.replaceAll("_", " ") ? {} : { synonyms: [synonym] })
        })
      }
    }
    const primary = table.columns.filter((c) => c.primaryKey).map((c) => sqlOf(c.name))
    return {
      name,
      ...(table.comment === undefined ? {} : { description: table.comment }),
      base_table: split(table.name),
      ...(primary.length === 0 ? {} : { primary_key: { columns: primary } }),
      ...(dimensions.length === 0 ? {} : { dimensions }),
      ...(timeDimensions.length === 0 ? {} : { time_dimensions: timeDimensions }),
      measures
    }
  })
  const relationships = schema.tables.flatMap((table) =>
    table.columns.flatMap((column): ReadonlyArray<SemanticModel.Relationship> => {
      const target = column.references === undefined ? undefined : logical.get(column.references.table)
      if (target === undefined) return []
      const from = logical.get(table.name)!
      return [{
        name: nameOf(`${from}_${column.name}`),
        left_table: from,
        right_table: target,
        relationship_type: "many_to_one",
        relationship_columns: [{ left_column: sqlOf(column.name), right_column: sqlOf(column.references!.column) }]
      }]
    })
  )
  const [first, ...rest] = tables
  if (first === undefined) return undefined
  return {
    name: nameOf(connector) || "model",
    description: `Derived from the schema of connector ${connector}: refine it and file it as semantic/<name>.yaml.`,
    connector,
    tables: [first, ...rest],
    ...(relationships.length === 0 ? {} : { relationships })
  }
}

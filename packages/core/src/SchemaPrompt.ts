/**
 * The connectors' schemas as the agent's system prompt shows them, in one plain-text format that a
 * model reads and that `parse` reads back (the offline model plans its queries from it, so it only
 * ever builds SQL from what introspection found).
 *
 * ```
 * ### Connector 3: Demo retail (DEMO, postgres)
 * table public.orders (~24000 rows): one row per order
 *   - id: integer; primary key
 *   - customer_id: integer; references public.customers.id
 * ```
 *
 * For a large schema only the tables most relevant to the question are shown (`rank`).
 *
 * @since 0.1.0
 */
import * as Runtime from "./ConnectorRuntime.js"

/**
 * A connector as the prompt describes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectorSchema {
  readonly id: number
  readonly name: string
  readonly type: string
  readonly schema: Runtime.SchemaInfo
}

/**
 * The most tables shown per connector.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTables = 40

const words = (text: string): ReadonlyArray<string> =>
  text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 1)

const stem = (word: string): string =>
  word.replace(/(ies)$/, "y").replace(/(ses|xes)$/, (m) => m.slice(0, -2)).replace(/s$/, "")

/**
 * Scores a table by how many of the question's words name it or its columns (whole table names weigh most).
 *
 * @since 0.1.0
 * @category utils
 */
export const score = (table: Runtime.Table, question: string): number => {
  const asked = new Set(words(question).map(stem))
  const tableWords = words(table.name.split(".").pop() ?? table.name).map(stem)
  let total = tableWords.some((w) => asked.has(w)) ? 10 : 0
  for (const column of table.columns) if (words(column.name).map(stem).some((w) => asked.has(w))) total += 1
  return total
}

/**
 * The tables to show for a question: all of them when few, else the best `limit` by `score` (ties keep schema order).
 *
 * @since 0.1.0
 * @category utils
 */
export const rank = (
  tables: ReadonlyArray<Runtime.Table>,
  question: string,
  limit: number = maxTables
): ReadonlyArray<Runtime.Table> => {
  if (tables.length <= limit) return tables
  const scored = tables.map((table, index) => ({ table, index, score: score(table, question) }))
  scored.sort((a, b) => b.score - a.score || a.index - b.index)
  return scored.slice(0, limit).sort((a, b) => a.index - b.index).map((s) => s.table)
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/**
 * Renders the connectors for the system prompt.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (connectors: ReadonlyArray<ConnectorSchema>, question: string): string =>
  connectors.map((connector) => {
    const tables = rank(connector.schema.tables, question)
    const lines = [
      `### Connector ${connector.id}: ${oneLine(connector.name)} (${connector.type}, ${connector.schema.dialect})`
    ]
    if (tables.length < connector.schema.tables.length) {
      lines.push(`(${tables.length} of ${connector.schema.tables.length} tables shown: those closest to the question)`)
    }
    for (const table of tables) {
      const comment = table.comment === undefined || table.comment === "" ? "" : `: ${oneLine(table.comment)}`
      lines.push(`table ${table.name} (~${Math.max(0, Math.round(table.rowEstimate))} rows)${comment}`)
      for (const column of table.columns) {
        const key = column.primaryKey ? "; primary key" : ""
        const ref = column.references === undefined
          ? ""
          : `; references ${column.references.table}.${column.references.column}`
        const note = column.comment === undefined || column.comment === "" ? "" : ` -- ${oneLine(column.comment)}`
        lines.push(`  - ${column.name}: ${column.type}${key}${ref}${note}`)
      }
    }
    return lines.join("\n")
  }).join("\n\n")

const connectorLine = new RegExp(
  `^### Connector (\\d+): (.*) \\(([A-Z_]+), (${Runtime.DialectName.literals.join("|")})\\)$`
)
const tableLine = /^table (\S+) \(~(\d+) rows\)(?:: (.*))?$/
const columnLine = /^ {2}- (\S+?): (.+?)(; primary key)?(?:; references (\S+))?(?: -- (.*))?$/

/**
 * Reads the connectors back from a text that contains `render`'s output (other lines are ignored).
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (text: string): ReadonlyArray<ConnectorSchema> => {
  const connectors: Array<
    { id: number; name: string; type: string; schema: { dialect: Runtime.DialectName; tables: Array<Runtime.Table> } }
  > = []
  let table: { name: string; rowEstimate: number; comment?: string; columns: Array<Runtime.Column> } | undefined
  for (const line of text.split("\n")) {
    const c = connectorLine.exec(line)
    if (c !== null) {
      connectors.push({
        id: Number(c[1]),
        name: c[2]!,
        type: c[3]!,
        schema: { dialect: c[4] as Runtime.DialectName, tables: [] }
      })
      table = undefined
      continue
    }
    const current = connectors.at(-1)
    if (current === undefined) continue
    const t = tableLine.exec(line)
    if (t !== null) {
      table = { name: t[1]!, rowEstimate: Number(t[2]), columns: [], ...(t[3] === undefined ? {} : { comment: t[3] }) }
      current.schema.tables.push(table)
      continue
    }
    const col = columnLine.exec(line)
    if (col !== null && table !== undefined) {
      const ref = col[4]
      const dot = ref === undefined ? -1 : ref.lastIndexOf(".")
      table.columns.push({
        name: col[1]!,
        type: col[2]!,
        nullable: true,
        primaryKey: col[3] !== undefined,
        ...(ref === undefined || dot < 0
          ? {}
          : { references: { table: ref.slice(0, dot), column: ref.slice(dot + 1) } }),
        ...(col[5] === undefined ? {} : { comment: col[5] })
      })
    }
  }
  return connectors
}

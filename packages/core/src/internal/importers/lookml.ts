// lookml-parser ships no types; every project that compiles core's sources needs these declarations.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./lookmlParser.d.ts" />
/**
 * LookML views and explores as a Sightline semantic model, read with lookml-parser (its pure
 * parsing and positions modules; see docs/decisions.md).
 *
 * - A view becomes a table (`sql_table_name`; a `derived_table` is a query, refused); a dimension a
 *   dimension, a `dimension_group` of type time a time dimension with its timeframes as grains,
 *   `primary_key: yes` the key; `${TABLE}.col` the column and `${dim}` the dimension's own SQL.
 * - A measure becomes a measure (its `filters` a named filter of the table they read, in Looker's
 *   filter expressions: `-value`, `a, b`, `NULL`, `>10`), and a `number` measure over measures a
 *   derived metric. Measures of one name in two views are told apart by their view's name.
 * - An explore's joins become relationships from the many side; its `sql_always_where` a filter on
 *   the measures of its base view.
 *
 * @internal
 */
import * as Either from "effect/Either"
import parse from "lookml-parser/lib/parse/index.js"
import { getPositions } from "lookml-parser/lib/positions/get-positions.js"
import type * as SemanticModel from "../../SemanticModel.js"
import * as MetricExpression from "../metricExpression.js"
import * as Importing from "./importing.js"
import { record, text, texts, type Unreadable, type Where } from "./located.js"

type Raw = Record<string, unknown>

/**
 * The named blocks of a kind (`dimension: id { … }`), each with its name and line: the parser's
 * position, or else the first `kind: name` of the file after the parent's own line.
 */
const blocks = (
  parent: Raw | undefined,
  kind: string,
  positions: Raw | undefined,
  file: { readonly path: string; readonly lines: ReadonlyArray<string> },
  after = 0
) =>
  Object.entries(record(parent?.[kind]) ?? {})
    .filter(([name]) => !name.startsWith("$"))
    .map(([name, value]) => {
      const at = record(record(positions?.[kind])?.[name])?.["$p"]
      const said = new RegExp(`^\\s*${kind}:\\s*${name}\\b`)
      const found = file.lines.findIndex((line, i) => i >= after && said.test(line))
      const line = Array.isArray(at) ? Number(at[0]) + 1 : found < 0 ? undefined : found + 1
      return {
        name,
        raw: record(value) ?? {},
        positions: record(record(positions?.[kind])?.[name]),
        file,
        at: { file: file.path, line } as Where
      }
    })

const timeframeGrains: Record<string, SemanticModel.Grain> = {
  date: "day",
  day: "day",
  week: "week",
  month: "month",
  quarter: "quarter",
  year: "year"
}
const aggregations: Record<string, SemanticModel.Aggregation> = {
  count: "count",
  count_distinct: "count_distinct",
  sum: "sum",
  average: "avg",
  min: "min",
  max: "max",
  median: "median",
  percentile: "percentile"
}
const formats: Record<string, SemanticModel.Format> = {
  usd: "currency",
  usd_0: "currency",
  eur: "currency",
  eur_0: "currency",
  gbp: "currency",
  gbp_0: "currency",
  percent_0: "percent",
  percent_1: "percent",
  percent_2: "percent",
  decimal_0: "integer"
}

/**
 * A Looker filter expression on one SQL value, as SQL, or nothing where it is not one Sightline
 * reads. As Looker reads it: the values it names are alternatives (`FOO, BAR`: either), the values
 * it excludes all hold (`-FOO, -BAR`: neither), and both together must (`FOO%, -FOOD`: starting
 * with FOO but not FOOD). `%` and `_` are wildcards, and `^` escapes one; a pattern becomes a LIKE
 * with Looker's own escape character, which PostgreSQL, MySQL and DuckDB all take.
 */
const filterExpression = (sql: string, expression: string): string | undefined => {
  const quote = (v: string) => (/^-?\d+(\.\d+)?$/.test(v) ? v : `'${v.replaceAll("'", "''")}'`)
  const parts = expression.split(",").map((p) => p.trim()).filter((p) => p !== "")
  if (parts.length === 0) return undefined
  const either: Array<string> = []
  const equal: Array<string> = []
  const all: Array<string> = []
  const not: Array<string> = []
  for (const part of parts) {
    const negated = part.startsWith("-") && part !== "-"
    const value = negated ? part.slice(1) : part
    // Looker's syntax of ranges, dates and words (`[1, 10]`, `5 to 10`, `NOT 5`, `last 7 days`) is
    // not read: as a value it would be compared as a string, another question than the filter's.
    if (
      /[[\]()]/.test(value) || /^(not|last|this|next|before|after)\s|\s(to|and|or|ago)(\s|$)/i.test(value) ||
      (negated && /^[<>]/.test(value))
    ) {
      return undefined
    }
    const condition = value === "NULL"
      ? `${sql} IS ${negated ? "NOT " : ""}NULL`
      : value === "EMPTY"
      ? negated ? `${sql} <> ''` : `(${sql} IS NULL OR ${sql} = '')`
      : !negated && /^(>=|<=|>|<)\s*-?\d+(\.\d+)?$/.test(value)
      ? `${sql} ${value.replace(/\s+/, " ")}`
      : /(^|[^^])[%_]/.test(value)
      ? `${sql} ${negated ? "NOT " : ""}LIKE ${quote(value)} ESCAPE '^'`
      : undefined
    if (condition !== undefined) (negated ? all : either).push(condition)
    else (negated ? not : equal).push(quote(value.replace(/\^(.)/g, "$1")))
  }
  if (equal.length > 0) either.push(equal.length === 1 ? `${sql} = ${equal[0]}` : `${sql} IN (${equal.join(", ")})`)
  if (not.length > 0) all.push(not.length === 1 ? `${sql} <> ${not[0]}` : `${sql} NOT IN (${not.join(", ")})`)
  const alternatives = either.length > 1 ? `(${either.join(" OR ")})` : either[0]
  return [...(alternatives === undefined ? [] : [alternatives]), ...all].join(" AND ")
}

export const importProject = (
  files: ReadonlyArray<Importing.SourceFile>,
  options: Importing.Options
): Either.Either<Importing.Imported, Unreadable> =>
  Either.gen(function*() {
    const report: Array<Importing.ReportLine> = []
    const say = (...line: Parameters<typeof Importing.lineOf>) => report.push(Importing.lineOf(...line))
    const views: Array<ReturnType<typeof blocks>[number]> = []
    const explores: Array<ReturnType<typeof blocks>[number]> = []
    let modelName: string | undefined
    // The fiscal year's start (`fiscal_month_offset` of a model file), where one is set.
    let fiscal: { readonly months: number; readonly at: Where } | undefined
    for (const file of files) {
      if (!/\.(lkml|lookml)$/i.test(file.path)) continue
      let parsed: Raw
      try {
        parsed = parse(file.text)
      } catch (error) {
        const at = /@(\d+),(\d+)/.exec(String(error))
        return yield* Either.left({
          file: file.path,
          ...(at === null ? {} : { line: Number(at[1]) }),
          message: String(error).replace(/^Parse error@\d+,\d+\s*/, "")
        })
      }
      const positions = record(getPositions(parsed))
      if (/\.model\.(lkml|lookml)$/i.test(file.path)) {
        modelName ??= file.path.split("/").at(-1)!.replace(/\.model\.(lkml|lookml)$/i, "")
        const offset = text(parsed["fiscal_month_offset"])
        if (offset !== undefined && /^-?\d+$/.test(offset.trim())) {
          const line = file.text.split("\n").findIndex((l) => /^\s*fiscal_month_offset\s*:/.test(l))
          fiscal ??= { months: Number(offset), at: { file: file.path, ...(line < 0 ? {} : { line: line + 1 }) } }
        }
      }
      const source = { path: file.path, lines: file.text.split("\n") }
      views.push(...blocks(parsed, "view", positions, source))
      explores.push(...blocks(parsed, "explore", positions, source))
    }
    const viewNames = new Set(views.map((v) => v.name))

    // A field's SQL over its view's table: `${TABLE}.col` the column, `${dim}` the dimension's SQL.
    const fieldSql = (view: Raw, sql: string, depth = 0): Either.Either<string, string> => {
      let failure: string | undefined
      const resolved = sql.replace(/\$\{([\w.]+)\}(\.)?/g, (all, reference: string, dot: string | undefined) => {
        if (reference === "TABLE") return dot === undefined ? all : ""
        const [first, second] = reference.split(".") as [string, string | undefined]
        const name = second === undefined ? first : first === text(view["$name"]) ? second : undefined
        const found = name === undefined
          ? undefined
          : record(record(view["dimension"])?.[name]) ??
            record(record(view["dimension_group"])?.[name.replace(/_(raw|time|date|week|month|quarter|year)$/, "")])
        if (found === undefined || depth > 5) {
          failure = `it reads ${reference}, which is not a dimension of its own view`
          return all
        }
        const inner = fieldSql(view, text(found["sql"]) ?? `\${TABLE}.${name}`, depth + 1)
        if (Either.isLeft(inner)) failure = inner.left
        const value = Either.getOrElse(inner, () => "")
        return `${/^[A-Za-z_]\w*$/.test(value) ? value : `(${value})`}${dot ?? ""}`
      })
      return failure === undefined ? Either.right(resolved.trim()) : Either.left(failure)
    }

    // The fiscal timeframes the dimension groups ask for.
    const granularities = new Set<string>()
    const tables = new Map<
      string,
      SemanticModel.Table & { measures: Array<SemanticModel.Measure>; filters: Array<SemanticModel.Filter> }
    >()
    const viewRaw = new Map(views.map((v) => [v.name, v.raw]))
    const metrics: Array<SemanticModel.DerivedMetric> = []
    const measureNames = new Set<string>()
    const measureOf = new Map<string, string>() // `view.measure` and `measure` → the model's name
    const formulas: Array<() => void> = []
    const pendingFilters: Array<{ readonly table: string; readonly filter: SemanticModel.Filter }> = []

    for (const view of views) {
      const raw = view.raw
      const sqlTable = text(raw["sql_table_name"])?.trim().replace(/[`"]/g, "")
      if (sqlTable === undefined) {
        say(
          view.at,
          "view",
          view.name,
          "refused",
          raw["derived_table"] !== undefined
            ? "its derived_table is a query: a view is read over a table"
            : "it has no sql_table_name"
        )
        continue
      }
      const [table, schema, database] = sqlTable.split(".").reverse()
      const dimensions: Array<SemanticModel.Dimension> = []
      const timeDimensions: Array<SemanticModel.TimeDimension> = []
      let primaryKey: string | undefined
      const words = (r: Raw) => ({
        ...(text(r["description"]) === undefined ? {} : { description: text(r["description"]) }),
        ...(text(r["label"]) === undefined ? {} : { synonyms: [text(r["label"])!] })
      })
      for (const dimension of blocks(raw, "dimension", view.positions, view.file, view.at.line)) {
        const sql = fieldSql(raw, text(dimension.raw["sql"]) ?? `\${TABLE}.${dimension.name}`)
        if (Either.isLeft(sql)) {
          say(dimension.at, "dimension", `${view.name}.${dimension.name}`, "refused", sql.left)
          continue
        }
        if (dimension.raw["primary_key"] === true) primaryKey = sql.right
        dimensions.push({
          name: dimension.name,
          ...(sql.right === dimension.name ? {} : { expr: sql.right }),
          ...words(dimension.raw)
        })
        say(dimension.at, "dimension", `${view.name}.${dimension.name}`, "imported")
      }
      for (const group of blocks(raw, "dimension_group", view.positions, view.file, view.at.line)) {
        if (text(group.raw["type"]) !== "time") {
          say(
            group.at,
            "dimension group",
            `${view.name}.${group.name}`,
            "refused",
            `a ${text(group.raw["type"])} group is not a time of rows`
          )
          continue
        }
        const sql = fieldSql(raw, text(group.raw["sql"]) ?? `\${TABLE}.${group.name}`)
        if (Either.isLeft(sql)) {
          say(group.at, "dimension group", `${view.name}.${group.name}`, "refused", sql.left)
          continue
        }
        const timeframes = texts(group.raw["timeframes"])
        const grains = [...new Set(timeframes.flatMap((t) => timeframeGrains[t] ?? []))]
        for (const timeframe of timeframes.filter((t) => t === "fiscal_year" || t === "fiscal_quarter")) {
          granularities.add(timeframe)
        }
        // Timeframes read as a grain, or as a fiscal period; the rest (raw, hours, parts of a date
        // such as day_of_week or fiscal_month_num) are not.
        const finer = timeframes.filter((t) =>
          timeframeGrains[t] === undefined && t !== "fiscal_year" && t !== "fiscal_quarter"
        )
        timeDimensions.push({
          name: group.name,
          ...(sql.right === group.name ? {} : { expr: sql.right }),
          ...(text(group.raw["datatype"]) === "date" ? { data_type: "DATE" } : {}),
          ...(grains.length === 0 || grains.length === 5
            ? {}
            : {
              grains: ["day", "week", "month", "quarter", "year"].filter((g) =>
                grains.includes(g as SemanticModel.Grain)
              ) as Array<SemanticModel.Grain>
            }),
          ...words(group.raw)
        })
        say(
          group.at,
          "dimension group",
          `${view.name}.${group.name}`,
          finer.length === 0 ? "imported" : "approximated",
          finer.length === 0 ? "a time dimension" : `a time dimension by day and coarser (${finer.join(", ")} not read)`
        )
      }
      tables.set(view.name, {
        name: view.name,
        ...words(raw),
        base_table: {
          ...(database === undefined ? {} : { database }),
          ...(options.schema !== undefined ? { schema: options.schema } : schema === undefined ? {} : { schema }),
          table: table!
        },
        ...(primaryKey === undefined || /\W/.test(primaryKey) ? {} : { primary_key: { columns: [primaryKey] } }),
        ...(dimensions.length === 0 ? {} : { dimensions }),
        ...(timeDimensions.length === 0 ? {} : { time_dimensions: timeDimensions }),
        measures: [],
        filters: []
      })
      say(view.at, "view", view.name, "imported", `table ${sqlTable}`)

      const measures = blocks(raw, "measure", view.positions, view.file, view.at.line)
      for (const measure of measures) {
        const type = text(measure.raw["type"]) ?? "count"
        const taken = measureNames.has(measure.name) ||
          views.some((v) => v.name !== view.name && record(v.raw["measure"])?.[measure.name] !== undefined)
        const name = taken ? `${view.name}_${measure.name}` : measure.name
        const note = taken ? `named ${name}: ${measure.name} is a measure of another view too` : undefined
        measureOf.set(`${view.name}.${measure.name}`, name)
        if (!measureOf.has(measure.name)) measureOf.set(measure.name, name)
        const format = formats[text(measure.raw["value_format_name"]) ?? ""]
        const described = { ...words(measure.raw), ...(format === undefined ? {} : { format }) }
        const refuse = (why: string) => say(measure.at, "measure", `${view.name}.${measure.name}`, "refused", why)
        if (type === "number") {
          formulas.push(() => {
            const sql = text(measure.raw["sql"]) ?? ""
            const refs: Array<string> = []
            let unknown: string | undefined
            const expr = sql.replace(/\$\{([\w.]+)\}/g, (_all, reference: string) => {
              const found = measureOf.get(reference.includes(".") ? reference : `${view.name}.${reference}`) ??
                measureOf.get(reference)
              if (found === undefined) unknown = reference
              else refs.push(found)
              return found ?? reference
            }).trim()
            const parsed = MetricExpression.parse(expr)
            if (unknown !== undefined || refs.length === 0 || Either.isLeft(parsed)) {
              return refuse(
                unknown !== undefined
                  ? `its sql reads ${unknown}, which is not a measure`
                  : Either.isLeft(parsed)
                  ? `its sql is SQL that derived metrics do not read (${parsed.left})`
                  : "its sql reads no measure"
              )
            }
            metrics.push({
              name,
              type: "derived",
              expr,
              metrics: [...new Set(refs)].map((r) => ({ name: r })) as [{ name: string }],
              ...described
            })
            say(measure.at, "measure", `${view.name}.${measure.name}`, "imported", note ?? "a derived metric")
          })
          continue
        }
        const agg = aggregations[type]
        if (agg === undefined) {
          refuse(
            type === "sum_distinct" || type === "average_distinct"
              ? `a ${type} dedupes by its sql_distinct_key, which Sightline does not read`
              : `its type ${type} is not an aggregation Sightline computes`
          )
          continue
        }
        const sql = agg === "count" ? undefined : fieldSql(raw, text(measure.raw["sql"]) ?? `\${TABLE}.${measure.name}`)
        if (sql !== undefined && Either.isLeft(sql)) {
          refuse(sql.left)
          continue
        }
        const filterNames: Array<string> = []
        const filters = record(measure.raw["filters"])
        const conditions: Array<{ table: string; expr: string }> = []
        for (const [field, value] of Object.entries(filters ?? {}).filter(([k]) => !k.startsWith("$"))) {
          const [owner, fieldName] = field.includes(".") ? field.split(".") as [string, string] : [view.name, field]
          const ownerView = viewRaw.get(owner)
          const fieldExpr = ownerView === undefined ? undefined : fieldSql(ownerView, `\${${fieldName}}`)
          const expression = fieldExpr === undefined || Either.isLeft(fieldExpr)
            ? undefined
            : filterExpression(fieldExpr.right, text(value) ?? "")
          if (expression === undefined) {
            conditions.length = 0
            refuse(`its filter on ${field} is not a field and a Looker filter expression Sightline reads`)
            break
          }
          conditions.push({ table: owner, expr: expression })
        }
        if (
          filters !== undefined && conditions.length === 0 && Object.keys(filters).some((k) => !k.startsWith("$"))
        ) continue
        if (new Set(conditions.map((c) => c.table)).size > 1) {
          refuse("its filters read two views")
          continue
        }
        if (conditions.length > 0) {
          const filterName = `${name}_filter`
          tables.get(conditions[0]!.table)?.filters.push({
            name: filterName,
            expr: conditions.map((c) => c.expr).join(" AND ")
          })
          filterNames.push(filterName)
          // A filter on a view defined later goes onto its table once it is read.
          if (!tables.has(conditions[0]!.table)) {
            pendingFilters.push({
              table: conditions[0]!.table,
              filter: { name: filterName, expr: conditions.map((c) => c.expr).join(" AND ") }
            })
          }
        }
        const percentile = Number(text(measure.raw["percentile"]))
        tables.get(view.name)!.measures.push({
          name,
          agg,
          ...(sql === undefined ? {} : { expr: sql.right }),
          ...(agg === "percentile"
            ? { agg_params: { percentile: percentile > 1 ? percentile / 100 : percentile } }
            : {}),
          ...(filterNames.length === 0 ? {} : { filters: filterNames }),
          ...described
        })
        measureNames.add(name)
        say(measure.at, "measure", `${view.name}.${measure.name}`, "imported", note ?? `${agg} measure`)
      }
    }
    for (const { filter, table } of pendingFilters) tables.get(table)?.filters.push(filter)
    for (const formula of formulas) formula()

    // Explores: their joins are the relationships; sql_always_where limits the base view's measures.
    const relationships: Array<SemanticModel.Relationship> = []
    for (const explore of explores) {
      const base = text(explore.raw["from"]) ?? text(explore.raw["view_name"]) ?? explore.name
      say(explore.at, "explore", explore.name, "imported", `joins from ${base}`)
      for (const join of blocks(explore.raw, "join", explore.positions, explore.file, explore.at.line)) {
        const joined = text(join.raw["from"]) ?? join.name
        const relationship = text(join.raw["relationship"]) ?? "many_to_one"
        const columns: Array<[string, string, string, string]> = []
        for (const part of (text(join.raw["sql_on"]) ?? "").split(/\s+and\s+/i)) {
          const match = /^\s*\$\{(\w+)\.(\w+)\}\s*=\s*\$\{(\w+)\.(\w+)\}\s*$/.exec(part)
          if (match === null) {
            columns.length = 0
            break
          }
          columns.push([match[1]!, match[2]!, match[3]!, match[4]!])
        }
        const column = (view: string, field: string) => {
          const raw = viewRaw.get(view)
          const sql = raw === undefined ? undefined : fieldSql(raw, `\${${field}}`)
          return sql === undefined || Either.isLeft(sql) || !/^[A-Za-z_]\w*$/.test(sql.right) ? undefined : sql.right
        }
        const sides = columns.map(([a, af, b, bf]) => {
          const other = a === joined ? b : a
          const [mine, theirs] = a === joined ? [[b, bf], [a, af]] : [[a, af], [b, bf]]
          return { other, from: column(mine![0]!, mine![1]!), to: column(theirs![0]!, theirs![1]!) }
        })
        const other = sides[0]?.other
        if (
          sides.length === 0 || sides.some((s) => s.from === undefined || s.to === undefined || s.other !== other) ||
          !viewNames.has(joined) || !tables.has(other!)
        ) {
          say(
            join.at,
            "join",
            `${explore.name}.${join.name}`,
            "refused",
            "its sql_on is not equalities of two views' columns"
          )
          continue
        }
        if (relationship === "many_to_many") {
          say(
            join.at,
            "join",
            `${explore.name}.${join.name}`,
            "refused",
            "a many-to-many join would multiply rows: Sightline joins many-to-one only"
          )
          continue
        }
        const reverse = relationship === "one_to_many"
        const left = reverse ? joined : other!
        const right = reverse ? other! : joined
        const pairs = sides.map((
          s
        ) => (reverse ? { left_column: s.to!, right_column: s.from! } : { left_column: s.from!, right_column: s.to! }))
        if (!relationships.some((r) => r.left_table === left && r.right_table === right)) {
          relationships.push({
            name: `${left}_${right}`,
            left_table: left,
            right_table: right,
            relationship_columns: pairs as [{ left_column: string; right_column: string }],
            ...(relationship === "one_to_one" ? { relationship_type: "one_to_one" as const } : {})
          })
        }
        say(join.at, "join", `${explore.name}.${join.name}`, "imported", relationship)
      }
      const always = text(explore.raw["sql_always_where"])
      if (always !== undefined) {
        const table = tables.get(base)
        const sql = table === undefined
          ? undefined
          : fieldSql(viewRaw.get(base)!, always.replace(new RegExp(`\\$\\{${base}\\.`, "g"), "${"))
        if (table === undefined || sql === undefined || Either.isLeft(sql)) {
          say(explore.at, "sql_always_where", explore.name, "refused", "it reads fields other than its base view's own")
        } else {
          const name = `${explore.name}_always`
          table.filters.push({ name, expr: sql.right })
          for (const [i, m] of table.measures.entries()) {
            table.measures[i] = { ...m, filters: [...(m.filters ?? []), name] }
          }
          say(
            explore.at,
            "sql_always_where",
            explore.name,
            "approximated",
            `a filter on ${base}'s measures, wherever they are read`
          )
        }
      }
    }

    // Fiscal years and quarters start where the model's offset says (January without one).
    const startMonth = Importing.startMonthAfter(fiscal?.months ?? 0)
    const custom_granularities = [...granularities].sort().reverse().map((name) => ({
      name,
      label: name === "fiscal_year" ? "Fiscal year" : "Fiscal quarter",
      grain: name === "fiscal_year" ? "year" as const : "quarter" as const,
      start_month: startMonth
    }))
    for (const granularity of custom_granularities) {
      say(
        fiscal?.at ??
          { file: files.find((f) => /\.model\.(lkml|lookml)$/i.test(f.path))?.path ?? files[0]?.path ?? "" },
        "timeframe",
        granularity.name,
        "imported",
        Importing.granularityNote(granularity)
      )
    }
    if (fiscal !== undefined && custom_granularities.length === 0) {
      say(
        fiscal.at,
        "fiscal_month_offset",
        String(fiscal.months),
        "imported",
        "no dimension group has a fiscal timeframe"
      )
    }
    const model = {
      name: Importing.modelName(options.name ?? modelName ?? "lookml"),
      ...(options.connector === undefined ? {} : { connector: options.connector }),
      tables: [...tables.values()].map((t) =>
        JSON.parse(JSON.stringify({
          ...t,
          measures: t.measures.length === 0 ? undefined : t.measures,
          filters: t.filters.length === 0 ? undefined : t.filters
        })) as SemanticModel.Table
      ),
      ...(relationships.length === 0 ? {} : { relationships }),
      ...(metrics.length === 0 ? {} : { metrics }),
      ...(custom_granularities.length === 0 ? {} : { custom_granularities })
    }
    return { model: model as unknown as SemanticModel.SemanticModelFile, report }
  })

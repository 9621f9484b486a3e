/**
 * A Cube data model as a Sightline semantic model: its YAML files (`cubes:`, `views:`) and its
 * JavaScript files (`cube(...)`, `view(...)` calls).
 *
 * JavaScript is never run: it is parsed (acorn) and only literal data is read from it (objects,
 * arrays, strings, numbers, template literals whose `${CUBE}` and `${other.member}` references
 * become Cube's `{CUBE}` and `{other.member}`, and arrow functions returning such values). A
 * statement other than a `cube()` or `view()` call, or a value computed any other way, is refused
 * in the report with its line; the rest of the file is still read.
 *
 * - A cube becomes a table (`sql_table`, or `sql` that selects a whole table); a dimension of type
 *   `time` a time dimension, the others dimensions, `primary_key` its key.
 * - Joins become relationships from the many side; segments named filters.
 * - A measure becomes a measure (its `filters` named filters of the table they read); `number`
 *   measures over other measures derived metrics; a `rolling_window` a cumulative metric over a
 *   base measure; a `time_shift` of a multi-stage measure a period-over-period metric.
 * - Views are read as the cubes they include: their names are reported, not kept.
 *
 * @internal
 */
import * as acorn from "acorn"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SemanticModel from "../../SemanticModel.js"
import * as MetricExpression from "../metricExpression.js"
import * as Importing from "./importing.js"
import { place, read, record, records, text, type Unreadable, type Where, whereOf } from "./located.js"

// ---------------------------------------------------------------------------------------------
// JavaScript models, read as data
// ---------------------------------------------------------------------------------------------

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
/** Keys whose values are keyed by member name in JavaScript and lists in YAML. */
const keyed = new Set(["measures", "dimensions", "joins", "segments", "pre_aggregations", "hierarchies", "folders"])

class NotData extends Error {
  constructor(readonly line: number | undefined, message: string) {
    super(message)
  }
}

const dataOf = (node: acorn.Node, file: string): unknown => {
  const line = node.loc?.start.line
  const fail = (message: string): never => {
    throw new NotData(line, message)
  }
  const n = node as acorn.AnyNode
  switch (n.type) {
    case "Literal":
      return n.value
    case "TemplateLiteral":
      return n.quasis.map((q, i) => {
        const expression = n.expressions[i]
        return `${q.value.cooked ?? q.value.raw}${
          expression === undefined
            ? ""
            : `{${
              referenceOf(expression) ?? fail("a template's ${…} names something other than a cube or its member")
            }}`
        }`
      }).join("")
    case "ArrayExpression":
      return place(n.elements.map((e) => (e === null ? fail("an array has a hole") : dataOf(e, file))), { file, line })
    case "ObjectExpression": {
      const out: Record<string, unknown> = {}
      for (const property of n.properties) {
        if (property.type !== "Property" || property.computed) fail("an object spreads or computes a key")
        const p = property as acorn.Property
        const key = snake(p.key.type === "Identifier" ? p.key.name : String((p.key as acorn.Literal).value))
        const value = dataOf(p.value, file)
        out[key] = keyed.has(key) && record(value) !== undefined
          ? place(
            Object.entries(record(value)!).map(([name, member]) =>
              place({ name, ...record(member) }, whereOf(member, file))
            ),
            { file, line: p.loc?.start.line }
          )
          : value
      }
      return place(out, { file, line })
    }
    case "ArrowFunctionExpression":
      return n.body.type === "BlockStatement" ? fail("a function has a body of statements") : dataOf(n.body, file)
    case "UnaryExpression":
      return n.operator === "-" && n.argument.type === "Literal" && typeof n.argument.value === "number"
        ? -n.argument.value
        : fail(`${n.operator} is computed, not data`)
    default:
      return fail(`a ${n.type} is computed, not data`)
  }
}

/** `CUBE`, `orders`, `CUBE.status`, `orders.status` as Cube's reference text. */
const referenceOf = (node: acorn.Node): string | undefined => {
  const n = node as acorn.AnyNode
  if (n.type === "Identifier") return n.name
  if (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier") {
    const object = referenceOf(n.object)
    return object === undefined ? undefined : `${object}.${n.property.name}`
  }
  return undefined
}

/**
 * A Cube custom granularity (`interval`, with an `offset` or an `origin`) as a model's: years or
 * quarters starting in a given month. Why not, for the others (weeks from Sunday, half years).
 */
const customGranularity = (raw: Record<string, unknown>): Either.Either<SemanticModel.CustomGranularity, string> => {
  const interval = /^\s*(\d+)\s+(month|quarter|year)s?\s*$/i.exec(text(raw["interval"]) ?? "")
  const months = interval === null
    ? undefined
    : Number(interval[1]) * { month: 1, quarter: 3, year: 12 }[interval[2]!.toLowerCase() as "month"]
  const grain = months === 12 ? "year" : months === 3 ? "quarter" : undefined
  if (grain === undefined) {
    return Either.left(
      `an interval of ${
        text(raw["interval"]) ?? "nothing"
      } is not a year or a quarter, the periods a custom granularity may have`
    )
  }
  const offset = text(raw["offset"]) === undefined
    ? undefined
    : /^\s*(-?\d+)\s+(month|quarter)s?\s*$/i.exec(text(raw["offset"])!)
  const origin = text(raw["origin"]) === undefined ? undefined : /^\d{4}-(\d{2})-01\b/.exec(text(raw["origin"])!)
  if (offset === null || origin === null) {
    return Either.left("its offset or origin is not a whole number of months (a period starting mid-month)")
  }
  const after = offset !== undefined
    ? Number(offset[1]) * (offset[2]!.toLowerCase() === "quarter" ? 3 : 1)
    : origin !== undefined
    ? Number(origin[1]) - 1
    : 0
  // The model's own rules for the rest (a lower_snake_case name, not a standard grain's).
  return Either.mapLeft(
    Schema.decodeUnknownEither(SemanticModel.CustomGranularity)({
      name: text(raw["name"]),
      ...(text(raw["title"]) === undefined ? {} : { label: text(raw["title"])! }),
      ...(text(raw["description"]) === undefined ? {} : { description: text(raw["description"])! }),
      grain,
      start_month: Importing.startMonthAfter(after)
    }),
    (error) =>
      ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => `${issue.path.join(".")}: ${issue.message}`)
        .join("; ")
  )
}

interface Definition {
  readonly kind: "cube" | "view"
  readonly raw: Record<string, unknown>
}

const readJavaScript = (
  file: string,
  source: string,
  refuse: (where: Where, name: string, why: string) => void
): Either.Either<ReadonlyArray<Definition>, Unreadable> => {
  let program: acorn.Program
  try {
    program = acorn.parse(source, { ecmaVersion: "latest", sourceType: "module", locations: true })
  } catch (error) {
    const at = (error as { loc?: { line: number } }).loc
    return Either.left({ file, line: at?.line, message: (error as Error).message.replace(/ \(\d+:\d+\)$/, "") })
  }
  const out: Array<Definition> = []
  for (const statement of program.body) {
    const line = statement.loc?.start.line
    const call = statement.type === "ExpressionStatement" && statement.expression.type === "CallExpression"
      ? statement.expression
      : undefined
    const callee = call?.callee.type === "Identifier" ? call.callee.name : undefined
    if (call === undefined || (callee !== "cube" && callee !== "view") || call.arguments.length !== 2) {
      refuse(
        { file, line },
        `statement at line ${line}`,
        "only cube() and view() calls are read; nothing else in a model file is run"
      )
      continue
    }
    try {
      const name = dataOf(call.arguments[0]!, file)
      const body = record(dataOf(call.arguments[1]!, file))
      if (typeof name !== "string" || body === undefined) {
        throw new NotData(line, "its name or its definition is not literal")
      }
      out.push({ kind: callee, raw: place({ name, ...body }, { file, line }) })
    } catch (error) {
      if (!(error instanceof NotData)) throw error
      refuse({ file, line: error.line ?? line }, `${callee} at line ${line}`, `it is not data: ${error.message}`)
    }
  }
  return Either.right(out)
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

const windowOf = (value: string | undefined): string | undefined => {
  const match = /^\s*(\d+)\s*(day|week|month|quarter|year)s?\s*$/i.exec(value ?? "")
  return match === null ? undefined : `${match[1]} ${match[2]!.toLowerCase()}${match[1] === "1" ? "" : "s"}`
}
const grains = ["day", "week", "month", "quarter", "year"] as const
// A member's SQL inside another's: a column as it is, an expression in parentheses.
const bracketed = (sql: string) => (/^[A-Za-z_]\w*$/.test(sql) ? sql : `(${sql})`)

export const importModel = (
  files: ReadonlyArray<Importing.SourceFile>,
  options: Importing.Options
): Either.Either<Importing.Imported, Unreadable> =>
  Either.gen(function*() {
    const report: Array<Importing.ReportLine> = []
    const say = (...line: Parameters<typeof Importing.lineOf>) => report.push(Importing.lineOf(...line))
    const definitions: Array<Definition> = []
    for (const file of files) {
      if (/\.(ya?ml)$/i.test(file.path)) {
        const top = record(yield* read(file.path, file.text))
        for (const raw of records(top?.["cubes"])) definitions.push({ kind: "cube", raw })
        for (const raw of records(top?.["views"])) definitions.push({ kind: "view", raw })
      } else if (/\.(js|cjs|mjs)$/i.test(file.path)) {
        definitions.push(
          ...(yield* readJavaScript(
            file.path,
            file.text,
            (at, name, why) => say(at, "statement", name, "refused", why)
          ))
        )
      }
    }
    const cubes = definitions.filter((d) => d.kind === "cube").map((d) => d.raw)
    const cubeNames = new Set(cubes.map((c) => text(c["name"])!))

    // A member's SQL over its own table: `{CUBE}.`, `{CUBE.member}` and `{member}` resolved.
    const ownSql = (cube: Record<string, unknown>, sql: string, depth = 0): Either.Either<string, string> => {
      let failure: string | undefined
      const resolved = sql.replace(/\{([A-Za-z_][\w.]*)\}(\.)?/g, (all, reference: string, dot: string | undefined) => {
        const parts = reference.split(".")
        if (parts[0] === "CUBE" || parts[0] === text(cube["name"])) {
          if (parts.length === 1) return "" // `{CUBE}.column` → `column`
          const member = records(cube["dimensions"]).find((d) => d["name"] === parts[1])
          if (member === undefined || depth > 5) {
            failure = `${reference} names no dimension of ${text(cube["name"])}`
            return all
          }
          const inner = ownSql(cube, text(member["sql"]) ?? parts[1]!, depth + 1)
          if (Either.isLeft(inner)) failure = inner.left
          return `${bracketed(Either.getOrElse(inner, () => ""))}${dot ?? ""}`
        }
        if (parts.length === 1 && !cubeNames.has(parts[0]!)) {
          const member = records(cube["dimensions"]).find((d) => d["name"] === parts[0])
          if (member !== undefined && depth <= 5) {
            const inner = ownSql(cube, text(member["sql"]) ?? parts[0]!, depth + 1)
            if (Either.isLeft(inner)) failure = inner.left
            return `${bracketed(Either.getOrElse(inner, () => ""))}${dot ?? ""}`
          }
        }
        failure = `it reads ${reference}, of another cube`
        return all
      })
      return failure === undefined ? Either.right(resolved.trim()) : Either.left(failure)
    }

    // A filter's SQL, on the one cube it reads (its own, or another's through `{other.member}`).
    const filterSql = (
      cube: Record<string, unknown>,
      sql: string
    ): Either.Either<{ table: string; expr: string }, string> => {
      const others = [...new Set([...sql.matchAll(/\{([A-Za-z_]\w*)(?:\.\w+)?\}/g)].map((m) => m[1]!))]
        .filter((name) => name !== "CUBE" && name !== text(cube["name"]) && cubeNames.has(name))
      if (others.length > 1) return Either.left("it reads two other cubes")
      const home = others.length === 1 ? cubes.find((c) => c["name"] === others[0])! : cube
      return Either.map(
        ownSql(
          home,
          sql.replaceAll(`{${text(home["name"])}.`, "{CUBE.").replaceAll(`{${text(home["name"])}}`, "{CUBE}")
        ),
        (expr) => ({ table: text(home["name"])!, expr })
      )
    }

    const tables = new Map<
      string,
      SemanticModel.Table & { measures: Array<SemanticModel.Measure>; filters: Array<SemanticModel.Filter> }
    >()
    const relationships: Array<SemanticModel.Relationship> = []
    const metrics: Array<SemanticModel.DerivedMetric> = []
    // A time dimension's custom granularities become the model's, by name.
    const granularities = new Map<string, SemanticModel.CustomGranularity>()
    const measureNames = new Set<string>()
    // Measures wait for every cube's filters and measures: a filter or a formula reads others.
    const pending: Array<{ readonly late: boolean; readonly run: () => void }> = []

    for (const cube of cubes) {
      const name = text(cube["name"])!
      const at = whereOf(cube, files[0]?.path ?? "")
      const sqlTable = text(cube["sql_table"]) ??
        /^\s*select\s+\*\s+from\s+([\w."]+)\s*$/i.exec(text(cube["sql"]) ?? "")?.[1]?.replaceAll("\"", "")
      if (sqlTable === undefined) {
        say(at, "cube", name, "refused", "its sql is a query: a cube is read over a table or a view (sql_table)")
        continue
      }
      const [table, schema, database] = sqlTable.split(".").reverse()
      const dimensions: Array<SemanticModel.Dimension> = []
      const timeDimensions: Array<SemanticModel.TimeDimension> = []
      let primaryKey: string | undefined
      for (const dimension of records(cube["dimensions"])) {
        const dimName = text(dimension["name"])!
        const where = whereOf(dimension, at.file)
        const sql = ownSql(cube, text(dimension["sql"]) ?? dimName)
        if (Either.isLeft(sql)) {
          say(where, "dimension", `${name}.${dimName}`, "refused", sql.left)
          continue
        }
        const expr = sql.right
        if (dimension["primary_key"] === true) primaryKey = expr
        const words = {
          name: dimName,
          ...(expr === dimName ? {} : { expr }),
          ...(text(dimension["description"]) === undefined ? {} : { description: text(dimension["description"]) }),
          ...(text(dimension["title"]) === undefined ? {} : { synonyms: [text(dimension["title"])!] })
        }
        if (text(dimension["type"]) === "time") timeDimensions.push(words)
        else dimensions.push(words)
        for (const granularity of records(dimension["granularities"])) {
          const granularityName = text(granularity["name"]) ?? ""
          const located = whereOf(granularity, at.file)
          const label = `${name}.${dimName}.${granularityName}`
          const custom = customGranularity(granularity)
          if (Either.isLeft(custom)) {
            say(located, "granularity", label, "refused", custom.left)
            continue
          }
          const known = granularities.get(granularityName)
          if (known !== undefined && JSON.stringify(known) !== JSON.stringify(custom.right)) {
            say(located, "granularity", label, "refused", `another dimension defines ${granularityName} otherwise`)
            continue
          }
          granularities.set(granularityName, custom.right)
          say(located, "granularity", label, "imported", Importing.granularityNote(custom.right))
        }
        say(
          where,
          "dimension",
          `${name}.${dimName}`,
          "imported",
          text(dimension["type"]) === "time" ? "a time dimension" : undefined
        )
      }
      const filters: Array<SemanticModel.Filter> = []
      for (const segment of records(cube["segments"])) {
        const segmentName = text(segment["name"])!
        const sql = ownSql(cube, text(segment["sql"]) ?? "")
        if (Either.isLeft(sql)) {
          say(whereOf(segment, at.file), "segment", `${name}.${segmentName}`, "refused", sql.left)
          continue
        }
        filters.push({
          name: segmentName,
          expr: sql.right,
          ...(text(segment["description"]) === undefined ? {} : { description: text(segment["description"]) })
        })
        say(whereOf(segment, at.file), "segment", `${name}.${segmentName}`, "imported", "a named filter")
      }
      tables.set(name, {
        name,
        ...(text(cube["description"]) === undefined ? {} : { description: text(cube["description"]) }),
        ...(text(cube["title"]) === undefined ? {} : { synonyms: [text(cube["title"])!] }),
        base_table: {
          ...(database === undefined ? {} : { database }),
          ...(options.schema !== undefined ? { schema: options.schema } : schema === undefined ? {} : { schema }),
          table: table!
        },
        ...(primaryKey === undefined || /\W/.test(primaryKey) ? {} : { primary_key: { columns: [primaryKey] } }),
        ...(dimensions.length === 0 ? {} : { dimensions }),
        ...(timeDimensions.length === 0 ? {} : { time_dimensions: timeDimensions }),
        measures: [],
        filters
      })
      say(at, "cube", name, "imported", `table ${sqlTable}`)

      for (const join of records(cube["joins"])) {
        const target = text(join["name"])!
        const where = whereOf(join, at.file)
        const columns: Array<{ left_column: string; right_column: string }> = []
        for (const part of (text(join["sql"]) ?? "").split(/\s+and\s+/i)) {
          const match = /^\s*\{(CUBE|\w+)(?:\}\.|\.)(\w+)\}?\s*=\s*\{(CUBE|\w+)(?:\}\.|\.)(\w+)\}?\s*$/.exec(part)
          if (match === null) break
          const [, a, aColumn, b, bColumn] = match as unknown as [string, string, string, string, string]
          const own = (n: string) => n === "CUBE" || n === name
          if (own(a) && b === target) columns.push({ left_column: aColumn, right_column: bColumn })
          else if (own(b) && a === target) columns.push({ left_column: bColumn, right_column: aColumn })
        }
        const relationship = text(join["relationship"]) ?? "many_to_one"
        if (columns.length === 0 || !cubeNames.has(target)) {
          say(
            where,
            "join",
            `${name} → ${target}`,
            "refused",
            cubeNames.has(target) ? "its sql is not equalities of the two cubes' columns" : `no cube named ${target}`
          )
          continue
        }
        const many = relationship === "one_to_many" || relationship === "has_many"
        relationships.push({
          name: `${name}_${target}`,
          left_table: many ? target : name,
          right_table: many ? name : target,
          relationship_columns: (many
            ? columns.map((c) => ({ left_column: c.right_column, right_column: c.left_column }))
            : columns) as [{ left_column: string; right_column: string }],
          ...(relationship === "one_to_one" || relationship === "has_one"
            ? { relationship_type: "one_to_one" as const }
            : {})
        })
        say(where, "join", `${name} → ${target}`, "imported", relationship)
      }

      for (const preAggregation of records(cube["pre_aggregations"])) {
        say(
          whereOf(preAggregation, at.file),
          "pre-aggregation",
          `${name}.${text(preAggregation["name"])}`,
          "imported",
          "a cache: Sightline reads the tables themselves"
        )
      }

      for (const measure of records(cube["measures"])) {
        pending.push({
          late: text(measure["type"]) === "number" || measure["multi_stage"] === true,
          run: () => {
            const measureName = text(measure["name"])!
            const where = whereOf(measure, at.file)
            const type = text(measure["type"]) ?? "count"
            const sql = text(measure["sql"])
            const described = {
              ...(text(measure["description"]) === undefined ? {} : { description: text(measure["description"]) }),
              ...(text(measure["title"]) === undefined ? {} : { synonyms: [text(measure["title"])!] })
            }
            const format = text(measure["format"]) === "currency" || text(measure["format"]) === "percent"
              ? { format: text(measure["format"]) as "currency" | "percent" }
              : {}
            const refuse = (why: string) => say(where, "measure", `${name}.${measureName}`, "refused", why)
            if (type === "number" || measure["multi_stage"] === true) {
              const shift = records(measure["time_shift"])[0]
              // `{revenue}`, `{CUBE.revenue}` and `{orders.revenue}` name measures (their names are unique).
              const refs = [...(sql ?? "").matchAll(/\{(?:\w+\.)?(\w+)\}/g)].map((m) => m[1]!).filter((r) =>
                r !== "CUBE"
              )
              if (shift !== undefined) {
                const offset = windowOf(text(shift["interval"]))
                const single = /^\s*\{(?:\w+\.)?(\w+)\}\s*$/.exec(sql ?? "")?.[1]
                if (offset === undefined || single === undefined || !measureNames.has(single)) {
                  return refuse("its time_shift is not one earlier period of one measure")
                }
                metrics.push({
                  name: measureName,
                  type: "period_over_period",
                  measure: single,
                  offset,
                  calculation: "previous",
                  ...described,
                  ...format
                })
                return say(where, "measure", `${name}.${measureName}`, "imported", `${single} ${offset} earlier`)
              }
              const expr = (sql ?? "").replace(/\{(?:\w+\.)?(\w+)\}/g, "$1")
              const parsed = MetricExpression.parse(expr)
              if (refs.length === 0 || Either.isLeft(parsed) || refs.some((r) => !measureNames.has(r))) {
                return refuse(
                  refs.length === 0
                    ? "a number measure over SQL, not over other measures, is not read"
                    : Either.isLeft(parsed)
                    ? `its formula is SQL that derived metrics do not read (${parsed.left})`
                    : "its formula names something that is not a measure"
                )
              }
              metrics.push({
                name: measureName,
                type: "derived",
                expr,
                metrics: [...new Set(refs)].map((r) => ({ name: r })) as [{ name: string }],
                ...described,
                ...format
              })
              return say(where, "measure", `${name}.${measureName}`, "imported", "a derived metric")
            }
            const agg = ({
              count: "count",
              count_distinct: "count_distinct",
              count_distinct_approx: "count_distinct",
              sum: "sum",
              avg: "avg",
              min: "min",
              max: "max",
              running_total: "sum"
            } as Record<string, SemanticModel.Aggregation>)[type]
            if (agg === undefined) return refuse(`its type ${type} is not an aggregation Sightline computes`)
            const value = sql === undefined ? undefined : ownSql(cube, sql)
            if (value !== undefined && Either.isLeft(value)) return refuse(value.left)
            const filterNames: Array<string> = []
            for (const [i, filter] of records(measure["filters"]).entries()) {
              const found = filterSql(cube, text(filter["sql"]) ?? "")
              if (Either.isLeft(found)) return refuse(`its filter cannot be read: ${found.left}`)
              const filterName = `${measureName}_filter${i === 0 ? "" : `_${i + 1}`}`
              tables.get(found.right.table)?.filters.push({ name: filterName, expr: found.right.expr })
              filterNames.push(filterName)
            }
            const rolling = record(measure["rolling_window"])
            const cumulative = rolling !== undefined || type === "running_total"
            const measureRecord: SemanticModel.Measure = {
              name: cumulative ? `${measureName}_base` : measureName,
              agg,
              ...(value === undefined || (agg === "count" && value.right === "*") ? {} : { expr: value.right }),
              ...(filterNames.length === 0 ? {} : { filters: filterNames }),
              ...(cumulative ? {} : { ...described, ...format })
            }
            tables.get(name)!.measures.push(measureRecord)
            measureNames.add(measureRecord.name)
            if (!cumulative) {
              return say(
                where,
                "measure",
                `${name}.${measureName}`,
                type === "count_distinct_approx" ? "approximated" : "imported",
                type === "count_distinct_approx" ? "counted exactly, not approximately" : `${agg} measure`
              )
            }
            const trailing = text(rolling?.["trailing"])
            const toDate = text(rolling?.["type"]) === "to_date" ? text(rolling?.["granularity"]) : undefined
            const window = trailing === undefined || trailing === "unbounded" ? undefined : windowOf(trailing)
            if (trailing !== undefined && trailing !== "unbounded" && window === undefined) {
              return refuse(`its trailing window ${trailing} is not in days, weeks, months, quarters or years`)
            }
            if (toDate !== undefined && !grains.includes(toDate as typeof grains[number])) {
              return refuse(`its to_date granularity ${toDate} is not a grain Sightline reads`)
            }
            const leading = text(rolling?.["leading"])
            metrics.push({
              name: measureName,
              type: "cumulative",
              measure: measureRecord.name,
              ...(window === undefined ? {} : { window }),
              ...(toDate === undefined ? {} : { grain_to_date: toDate as SemanticModel.Grain }),
              ...(text(rolling?.["offset"]) === "start" ? { period_agg: "first" as const } : {}),
              ...described,
              ...format
            })
            say(
              where,
              "measure",
              `${name}.${measureName}`,
              leading === undefined ? "imported" : "approximated",
              leading === undefined
                ? "a cumulative metric"
                : `its leading window ${leading} is not read: each period reads up to its end`
            )
          }
        })
      }
    }
    for (const { run } of pending.filter((p) => !p.late)) run()
    for (const { run } of pending.filter((p) => p.late)) run()
    for (const view of definitions.filter((d) => d.kind === "view")) {
      say(
        whereOf(view.raw, files[0]?.path ?? ""),
        "view",
        text(view.raw["name"]) ?? "",
        "approximated",
        "its members are read from the cubes it includes; the view itself is not kept"
      )
    }
    const model = {
      name: Importing.modelName(options.name ?? "cube"),
      ...(options.connector === undefined ? {} : { connector: options.connector }),
      tables: [...tables.values()].map((t) => ({
        ...t,
        ...(t.measures.length === 0 ? { measures: undefined } : {}),
        ...(t.filters.length === 0 ? { filters: undefined } : {})
      })).map((t) => JSON.parse(JSON.stringify(t)) as SemanticModel.Table),
      ...(relationships.length === 0 ? {} : { relationships }),
      ...(metrics.length === 0 ? {} : { metrics }),
      ...(granularities.size === 0 ? {} : { custom_granularities: [...granularities.values()] })
    }
    return { model: model as unknown as SemanticModel.SemanticModelFile, report }
  })

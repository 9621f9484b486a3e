/**
 * Apache Ossie (the Open Semantic Interchange, OSI) documents, both ways: a Sightline model written
 * as an OSI document that other tools read, and an OSI document read as a model.
 *
 * OSI says what every semantic layer shares: datasets with their fields (dimensions, time
 * dimensions, row-level facts), relationships from the many side to the one side, and metrics as
 * aggregate SQL. What it cannot say (a measure's filters and format, a derived metric's kind,
 * verified queries, named periods, a row filter) travels in each object's `custom_extensions` under
 * the vendor name `SIGHTLINE`, so a document Sightline wrote reads back as the same model, while
 * another tool reads the portable part. A document from elsewhere is read from its portable part:
 * a metric that is one aggregate over one dataset becomes a measure; anything else is refused in
 * the report.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as SemanticModel from "../../SemanticModel.js"
import * as Importing from "./importing.js"
import { read, record, records, text, texts, type Unreadable, whereOf } from "./located.js"

export const vendor = "SIGHTLINE"
export const version = "0.1.1"

const expression = (sql: string) => ({ dialects: [{ dialect: "ANSI_SQL", expression: sql }] })
const extension = (data: Record<string, unknown>) =>
  Object.values(data).some((v) => v !== undefined)
    ? { custom_extensions: [{ vendor_name: vendor, data: JSON.stringify(data) }] }
    : {}
const aiContext = (synonyms: ReadonlyArray<string> | undefined, instructions?: string) =>
  (synonyms?.length ?? 0) === 0 && instructions === undefined
    ? {}
    : {
      ai_context: {
        ...(instructions === undefined ? {} : { instructions }),
        ...((synonyms?.length ?? 0) === 0 ? {} : { synonyms })
      }
    }
const described = (description: string | undefined) => (description === undefined ? {} : { description })

const aggregateSql: Record<SemanticModel.Aggregation, (value: string) => string> = {
  sum: (v) => `SUM(${v})`,
  count: (v) => `COUNT(${v})`,
  count_distinct: (v) => `COUNT(DISTINCT ${v})`,
  avg: (v) => `AVG(${v})`,
  min: (v) => `MIN(${v})`,
  max: (v) => `MAX(${v})`,
  median: (v) => `MEDIAN(${v})`,
  percentile: (v) => `PERCENTILE_CONT(${v})`,
  sum_boolean: (v) => `SUM(CASE WHEN ${v} THEN 1 ELSE 0 END)`
}

/** A column reference qualified by its dataset, where the expression is one column. */
const qualified = (
  table: string,
  expr: string
) => (/^[A-Za-z_]\w*$/.test(expr.trim()) ? `${table}.${expr.trim()}` : expr)

/** A Sightline model file as an OSI document. */
export const exportModel = (file: SemanticModel.SemanticModelFile): Record<string, unknown> => {
  const filtersByName = new Map(
    file.tables.flatMap((t) => (t.filters ?? []).map((f) => [f.name, { table: t.name, expr: f.expr }] as const))
  )
  const measureSql = (table: string, measure: SemanticModel.Measure) => {
    const value = measure.expr === undefined ? "*" : qualified(table, measure.expr)
    const conditions = (measure.filters ?? []).map((name) => filtersByName.get(name)?.expr ?? name)
    const guarded = conditions.length === 0
      ? value
      : `CASE WHEN ${conditions.join(" AND ")} THEN ${value === "*" ? "1" : value} END`
    return aggregateSql[measure.agg](guarded)
  }
  const measures = new Map(
    file.tables.flatMap((t) => (t.measures ?? []).map((m) => [m.name, { table: t.name, measure: m }] as const))
  )
  const metricSql = (metric: SemanticModel.DerivedMetric): string => {
    const of = (name: string) => {
      const found = measures.get(name)
      return found === undefined ? name : measureSql(found.table, found.measure)
    }
    switch (metric.type) {
      case "ratio":
        return `${of(metric.numerator)} / NULLIF(${of(metric.denominator)}, 0)`
      case "share":
      case "period_over_period":
      case "cumulative":
        return of(metric.measure)
      case "derived":
        return metric.expr
      case "conversion":
        return of(metric.base_measure)
    }
  }
  return {
    version,
    semantic_model: [{
      name: file.name,
      ...described(file.description),
      ...aiContext(undefined, file.custom_instructions),
      datasets: file.tables.map((table) => {
        const {
          base_table,
          description,
          dimensions,
          facts,
          filters,
          measures: _,
          metrics,
          name,
          primary_key,
          row_filter,
          synonyms,
          time_dimensions
        } = table
        return {
          name,
          source: [base_table.database, base_table.schema, base_table.table].filter((p) => p !== undefined).join("."),
          ...(primary_key === undefined ? {} : { primary_key: primary_key.columns }),
          ...described(description),
          ...aiContext(synonyms),
          fields: [
            ...(dimensions ?? []).map(({ description, expr, name, synonyms, ...rest }) => ({
              name,
              expression: expression(expr ?? name),
              dimension: { is_time: false },
              ...described(description),
              ...aiContext(synonyms),
              ...extension({ ...rest, ...(expr === undefined ? {} : { expr }) })
            })),
            ...(time_dimensions ?? []).map(({ description, expr, name, synonyms, ...rest }) => ({
              name,
              expression: expression(expr ?? name),
              dimension: { is_time: true },
              ...described(description),
              ...aiContext(synonyms),
              ...extension({ ...rest, ...(expr === undefined ? {} : { expr }) })
            })),
            ...(facts ?? []).map(({ description, expr, name, synonyms, ...rest }) => ({
              name,
              expression: expression(expr),
              ...described(description),
              ...aiContext(synonyms),
              ...extension(rest)
            }))
          ],
          ...extension({ row_filter, filters, metrics })
        }
      }),
      ...((file.relationships ?? []).length === 0 ? {} : {
        relationships: file.relationships!.map((r) => ({
          name: r.name,
          from: r.left_table,
          to: r.right_table,
          from_columns: r.relationship_columns.map((c) => c.left_column),
          to_columns: r.relationship_columns.map((c) => c.right_column),
          ...extension({ relationship_type: r.relationship_type, join_type: r.join_type })
        }))
      }),
      metrics: [
        ...file.tables.flatMap((table) =>
          (table.measures ?? []).map((measure) => ({
            name: measure.name,
            expression: expression(measureSql(table.name, measure)),
            ...described(measure.description),
            ...aiContext(measure.synonyms),
            ...extension({ table: table.name, measure })
          }))
        ),
        ...(file.metrics ?? []).map((metric) => ({
          name: metric.name,
          expression: expression(metricSql(metric)),
          ...described(metric.description),
          ...aiContext(metric.synonyms),
          ...extension({ metric })
        }))
      ],
      ...extension({
        connector: file.connector,
        connector_type: file.connector_type,
        time_zone: file.time_zone,
        verified_queries: file.verified_queries,
        periods: file.periods,
        custom_granularities: file.custom_granularities,
        drivers: file.drivers,
        module_custom_instructions: file.module_custom_instructions
      })
    }]
  }
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/** The `SIGHTLINE` extension of an object, read; none when absent or not JSON. */
const ours = (raw: Record<string, unknown>): Record<string, unknown> | undefined => {
  const found = records(raw["custom_extensions"]).find((e) => text(e["vendor_name"])?.toUpperCase() === vendor)
  if (found === undefined) return undefined
  try {
    return record(JSON.parse(text(found["data"]) ?? ""))
  } catch {
    return undefined
  }
}

const sqlOf = (value: unknown): string | undefined => {
  const dialects = records(record(value)?.["dialects"])
  const chosen = dialects.find((d) => text(d["dialect"]) === "ANSI_SQL") ?? dialects[0]
  return chosen === undefined ? undefined : text(chosen["expression"])
}

const synonymsOf = (raw: Record<string, unknown>): ReadonlyArray<string> => {
  const context = raw["ai_context"]
  return [...texts(record(context)?.["synonyms"]), ...(text(raw["label"]) === undefined ? [] : [text(raw["label"])!])]
}

const withSynonyms = (
  synonyms: ReadonlyArray<string>
) => (synonyms.length === 0 ? {} : { synonyms: [...new Set(synonyms)] })

export const importDocuments = (
  files: ReadonlyArray<Importing.SourceFile>,
  options: Importing.Options
): Either.Either<Importing.Imported, Unreadable> =>
  Either.gen(function*() {
    const report: Array<Importing.ReportLine> = []
    const say = (...line: Parameters<typeof Importing.lineOf>) => report.push(Importing.lineOf(...line))
    let found: { raw: Record<string, unknown>; file: string } | undefined
    for (const file of files) {
      if (!/\.(ya?ml|json)$/i.test(file.path)) continue
      const top = record(yield* read(file.path, file.text))
      const models = records(top?.["semantic_model"])
      if (models.length === 0) continue
      const ver = text(top?.["version"])
      if (ver !== undefined && !/^0\.[12]\./.test(ver)) {
        return yield* Either.left({
          file: file.path,
          message: `OSI version ${ver} is not one this importer reads (0.1.x, 0.2.x)`
        })
      }
      for (const [i, model] of models.entries()) {
        if (found === undefined) found = { raw: model, file: file.path }
        else {say(
            whereOf(model, file.path),
            "semantic model",
            text(model["name"]) ?? `#${i}`,
            "refused",
            "a model is imported at a time: the first is"
          )}
      }
    }
    if (found === undefined) {
      return yield* Either.left({
        file: files[0]?.path ?? "",
        message: "no OSI document (a semantic_model list) among the files"
      })
    }
    const { file, raw } = found
    const extra = ours(raw) ?? {}
    const tables: Array<SemanticModel.Table> = []
    const tableNames = new Set<string>()
    for (const dataset of records(raw["datasets"])) {
      const name = text(dataset["name"])!
      const at = whereOf(dataset, file)
      const own = ours(dataset) ?? {}
      const source = (text(dataset["source"]) ?? name).split(".")
      if (/\s/.test(source.join("."))) {
        say(at, "dataset", name, "refused", "its source is a query: a dataset is a table or a view here")
        continue
      }
      const dimensions: Array<SemanticModel.Dimension> = []
      const timeDimensions: Array<SemanticModel.TimeDimension> = []
      const facts: Array<SemanticModel.Fact> = []
      for (const field of records(dataset["fields"])) {
        const fieldName = text(field["name"])!
        const sql = sqlOf(field["expression"]) ?? fieldName
        const fieldOwn = ours(field) ?? {}
        const common = {
          name: fieldName,
          ...described(text(field["description"])),
          ...withSynonyms(synonymsOf(field))
        }
        const dimension = record(field["dimension"])
        const datatype = text(field["datatype"])
        const isTime = dimension?.["is_time"] === true ||
          (dimension !== undefined && dimension["is_time"] === undefined &&
            /^(Date|Time|DateTime|DateTimeTz)$/.test(datatype ?? ""))
        if (dimension === undefined) {
          facts.push({ ...common, expr: sql, ...fieldOwn } as SemanticModel.Fact)
        } else if (isTime) {
          timeDimensions.push(
            {
              ...common,
              ...(sql === fieldName ? {} : { expr: sql }),
              ...(datatype === "Date" ? { data_type: "DATE" } : {}),
              ...fieldOwn
            } as SemanticModel.TimeDimension
          )
        } else {
          dimensions.push(
            { ...common, ...(sql === fieldName ? {} : { expr: sql }), ...fieldOwn } as SemanticModel.Dimension
          )
        }
        say(
          whereOf(field, file),
          "field",
          `${name}.${fieldName}`,
          "imported",
          dimension === undefined ? "a fact" : isTime ? "a time dimension" : "a dimension"
        )
      }
      const [table, schema, database] = [...source].reverse()
      tables.push({
        name,
        ...described(text(dataset["description"])),
        ...withSynonyms(synonymsOf(dataset)),
        base_table: {
          ...(database === undefined ? {} : { database }),
          ...(options.schema !== undefined ? { schema: options.schema } : schema === undefined ? {} : { schema }),
          table: table!
        },
        ...(texts(dataset["primary_key"]).length === 0
          ? {}
          : { primary_key: { columns: [...texts(dataset["primary_key"])] } }),
        ...(dimensions.length === 0 ? {} : { dimensions }),
        ...(timeDimensions.length === 0 ? {} : { time_dimensions: timeDimensions }),
        ...(facts.length === 0 ? {} : { facts }),
        ...own
      } as SemanticModel.Table)
      tableNames.add(name)
      say(at, "dataset", name, "imported", `table ${source.join(".")}`)
    }
    const relationships: Array<SemanticModel.Relationship> = []
    for (const relationship of records(raw["relationships"])) {
      const name = text(relationship["name"])!
      const from = texts(relationship["from_columns"])
      const to = texts(relationship["to_columns"])
      if (from.length === 0 || from.length !== to.length) {
        say(
          whereOf(relationship, file),
          "relationship",
          name,
          "refused",
          "its from_columns and to_columns differ in length"
        )
        continue
      }
      relationships.push({
        name,
        left_table: text(relationship["from"])!,
        right_table: text(relationship["to"])!,
        relationship_columns: from.map((left_column, i) => ({ left_column, right_column: to[i]! })) as [
          { left_column: string; right_column: string },
          ...Array<{ left_column: string; right_column: string }>
        ],
        ...(ours(relationship) ?? {})
      } as SemanticModel.Relationship)
      say(whereOf(relationship, file), "relationship", name, "imported", "many-to-one, from the many side")
    }
    const metrics: Array<SemanticModel.DerivedMetric> = []
    const tableOf = new Map(tables.map((t) => [t.name, t]))
    for (const metric of records(raw["metrics"])) {
      const name = text(metric["name"])!
      const at = whereOf(metric, file)
      const own = ours(metric)
      const words = { ...described(text(metric["description"])), ...withSynonyms(synonymsOf(metric)) }
      if (own?.["measure"] !== undefined && tableOf.has(text(own["table"]) ?? "")) {
        const table = tableOf.get(text(own["table"])!)!
        tableOf.set(table.name, {
          ...table,
          measures: [...(table.measures ?? []), own["measure"] as SemanticModel.Measure]
        })
        say(at, "metric", name, "imported", `a measure of ${table.name}`)
        continue
      }
      if (own?.["metric"] !== undefined) {
        metrics.push(own["metric"] as SemanticModel.DerivedMetric)
        say(at, "metric", name, "imported")
        continue
      }
      const sql = sqlOf(metric["expression"]) ?? ""
      const datasets = [...new Set([...sql.matchAll(/\b([A-Za-z_]\w*)\.(?=[A-Za-z_"])/g)].map((m) => m[1]!))]
        .filter((d) => tableOf.has(d))
      const home = datasets.length === 1 ? tableOf.get(datasets[0]!) : undefined
      // One aggregate over one dataset's row expression, read as a Snowflake table metric is.
      const measure = home === undefined ? undefined : SemanticModel.measureOfMetric(home.name, { name, expr: sql })
      if (home === undefined || measure === undefined || Either.isLeft(measure)) {
        say(
          at,
          "metric",
          name,
          "refused",
          home === undefined
            ? "its expression does not read exactly one dataset's columns"
            : `its expression ${sql} is not one aggregate (SUM, COUNT, COUNT(DISTINCT), AVG, MIN, MAX)`
        )
        continue
      }
      tableOf.set(home.name, { ...home, measures: [...(home.measures ?? []), { ...measure.right, ...words }] })
      const agg = measure.right.agg
      say(at, "metric", name, "imported", `${agg} of ${home.name}`)
    }
    const model = {
      name: Importing.modelName(options.name ?? text(raw["name"]) ?? "osi"),
      ...described(text(raw["description"])),
      ...(options.connector !== undefined ? { connector: options.connector } : {}),
      ...(record(raw["ai_context"])?.["instructions"] !== undefined
        ? { custom_instructions: text(record(raw["ai_context"])!["instructions"]) }
        : typeof raw["ai_context"] === "string"
        ? { custom_instructions: raw["ai_context"] }
        : {}),
      ...Object.fromEntries(
        Object.entries(extra).filter(([key, value]) =>
          value !== undefined && !(key === "connector" && options.connector !== undefined)
        )
      ),
      tables: [...tableOf.values()],
      ...(relationships.length === 0 ? {} : { relationships }),
      ...(metrics.length === 0 ? {} : { metrics })
    }
    return { model: model as unknown as SemanticModel.SemanticModelFile, report }
  })

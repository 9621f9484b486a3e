/**
 * dbt MetricFlow definitions as a Sightline semantic model: the YAML of a dbt project (the legacy
 * spec's `semantic_models:`, `metrics:` and `saved_queries:`, and the latest spec's
 * `models[].semantic_model` with entities and dimensions on columns and simple metrics on the model),
 * or the `semantic_manifest.json` that `dbt parse` writes.
 *
 * - A semantic model becomes a table; its entities become its primary key, relationships to the
 *   models where they are primary (or unique), and dimensions that name the key.
 * - A measure (or a latest-spec simple metric) becomes a measure; a simple metric over a measure
 *   is that measure, or a copy of it with the metric's filter, `fill_nulls_with` and
 *   `join_to_timespine`.
 * - Ratio, derived, cumulative and conversion metrics become Sightline's own, a filter template
 *   (`{{ Dimension('order__status') }} = 'completed'`) a named filter on the table it reads.
 * - A saved query becomes a verified semantic query.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as SemanticModel from "../../SemanticModel.js"
import type * as SemanticQuery from "../../SemanticQuery.js"
import * as MetricExpression from "../metricExpression.js"
import * as SemanticImport from "./importing.js"
import { read, record, records, text, texts, type Unreadable, type Where, whereOf } from "./located.js"

type ReportLine = SemanticImport.ReportLine
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer U> ? Array<U> : T[K] }

interface Entity {
  readonly name: string
  readonly type: string
  readonly expr: string
  readonly at: Where
}
interface Dimension {
  readonly name: string
  readonly type: "categorical" | "time"
  readonly expr: string | undefined
  readonly granularity: string | undefined
  readonly description: string | undefined
  readonly synonyms: ReadonlyArray<string>
  readonly at: Where
}
/** A measure of the legacy spec, or a simple metric of the latest (which carries its aggregation). */
interface Measure {
  readonly name: string
  readonly raw: Record<string, unknown>
  readonly at: Where
}
interface Model {
  readonly name: string
  readonly description: string | undefined
  readonly baseTable: SemanticModel.BaseTable
  readonly defaultTime: string | undefined
  readonly entities: Array<Entity>
  readonly dimensions: Array<Dimension>
  readonly measures: Array<Measure>
  readonly at: Where
}
interface Metric {
  readonly raw: Record<string, unknown>
  readonly at: Where
}

// ---------------------------------------------------------------------------------------------
// Reading the project
// ---------------------------------------------------------------------------------------------

/** `ref('orders')`, `ref("pkg", "orders")` → `orders`. */
const refName = (value: string | undefined): string | undefined =>
  value === undefined
    ? undefined
    : (/ref\(\s*(?:['"][^'"]+['"]\s*,\s*)?['"]([^'"]+)['"]\s*\)/.exec(value)?.[1] ?? value)

const synonymsOf = (raw: Record<string, unknown>, name: string): ReadonlyArray<string> => {
  const label = text(raw["label"])
  const meta = record(raw["meta"]) ?? record(record(raw["config"])?.["meta"])
  return [
    ...(label !== undefined && label.toLowerCase() !== name.replaceAll("_", " ").toLowerCase() ? [label] : []),
    ...texts(meta?.["synonyms"])
  ]
}

const legacyModel = (raw: Record<string, unknown>, file: string, schema: string | undefined): Model => {
  const relation = record(raw["node_relation"])
  const table = text(relation?.["alias"]) ?? refName(text(raw["model"])) ?? text(raw["name"])!
  const schemaName = schema ?? text(relation?.["schema_name"])
  return {
    name: text(raw["name"])!,
    description: text(raw["description"]),
    baseTable: { ...(schemaName === undefined ? {} : { schema: schemaName }), table },
    defaultTime: text(record(raw["defaults"])?.["agg_time_dimension"]),
    entities: records(raw["entities"]).map((e) => ({
      name: text(e["name"])!,
      type: text(e["type"]) ?? "foreign",
      expr: text(e["expr"]) ?? text(e["name"])!,
      at: whereOf(e, file)
    })),
    dimensions: records(raw["dimensions"]).map((d) => ({
      name: text(d["name"])!,
      type: text(d["type"]) === "time" ? "time" : "categorical",
      expr: text(d["expr"]),
      granularity: text(record(d["type_params"])?.["time_granularity"]),
      description: text(d["description"]),
      synonyms: synonymsOf(d, text(d["name"])!),
      at: whereOf(d, file)
    })),
    measures: records(raw["measures"]).map((m) => ({ name: text(m["name"])!, raw: m, at: whereOf(m, file) })),
    at: whereOf(raw, file)
  }
}

/** A model of the latest spec: `semantic_model` on the dbt model, entities and dimensions on its columns. */
const latestModel = (raw: Record<string, unknown>, file: string, schema: string | undefined): Model | undefined => {
  const semantic = raw["semantic_model"]
  const enabled = semantic === true || (record(semantic) !== undefined && record(semantic)!["enabled"] !== false)
  if (!enabled) return undefined
  const entities: Array<Entity> = []
  const dimensions: Array<Dimension> = []
  for (const column of records(raw["columns"])) {
    const name = text(column["name"])!
    const entity = column["entity"]
    if (entity !== undefined) {
      const e = record(entity)
      entities.push({
        name: text(e?.["name"]) ?? name,
        type: text(e?.["type"]) ?? text(entity) ?? "foreign",
        expr: text(e?.["expr"]) ?? name,
        at: whereOf(column, file)
      })
    }
    const dimension = column["dimension"]
    if (dimension !== undefined) {
      const d = record(dimension)
      const type = text(d?.["type"]) ?? text(dimension)
      dimensions.push({
        name: text(d?.["name"]) ?? name,
        type: type === "time" ? "time" : "categorical",
        expr: text(d?.["expr"]) ?? (text(d?.["name"]) === undefined ? undefined : name),
        granularity: text(column["granularity"]) ?? text(d?.["granularity"]),
        description: text(d?.["description"]) ?? text(column["description"]),
        synonyms: synonymsOf({ ...column, ...d }, text(d?.["name"]) ?? name),
        at: whereOf(column, file)
      })
    }
  }
  const alias = text(record(raw["config"])?.["alias"])
  return {
    name: text(record(semantic)?.["name"]) ?? text(raw["name"])!,
    description: text(raw["description"]),
    baseTable: { ...(schema === undefined ? {} : { schema }), table: alias ?? text(raw["name"])! },
    defaultTime: text(raw["agg_time_dimension"]),
    entities,
    dimensions,
    measures: records(raw["metrics"]).filter((m) => (text(m["type"]) ?? "simple") === "simple")
      .map((m) => ({ name: text(m["name"])!, raw: m, at: whereOf(m, file) })),
    at: whereOf(raw, file)
  }
}

interface Project {
  readonly name: string | undefined
  readonly models: Array<Model>
  readonly metrics: Array<Metric>
  readonly savedQueries: Array<Metric>
  /** The time spines' custom granularities (`time_spine.custom_granularities`). */
  readonly granularities: Array<Metric>
}

const readProject = (
  files: ReadonlyArray<SemanticImport.SourceFile>,
  schema: string | undefined
): Either.Either<Project, Unreadable> =>
  Either.gen(function*() {
    const project: Project = { name: undefined, models: [], metrics: [], savedQueries: [], granularities: [] }
    let name: string | undefined
    for (const file of files) {
      if (!/\.(ya?ml|json)$/i.test(file.path)) continue
      const value = yield* read(file.path, file.text)
      const top = record(value)
      if (top === undefined) continue
      if (/(^|\/)dbt_project\.ya?ml$/.test(file.path)) name = text(top["name"])
      for (const raw of records(top["semantic_models"])) project.models.push(legacyModel(raw, file.path, schema))
      const spines = [
        ...records(top["models"]).flatMap((m) => records([m["time_spine"]])),
        ...records(record(top["project_configuration"])?.["time_spines"])
      ]
      for (const spine of spines) {
        for (const raw of records(spine["custom_granularities"])) {
          project.granularities.push({ raw, at: whereOf(raw, file.path) })
        }
      }
      for (const raw of records(top["models"])) {
        const model = latestModel(raw, file.path, schema)
        if (model !== undefined) project.models.push(model)
        // A latest-spec model's metrics other than simple ones read like top-level ones.
        for (const metric of records(raw["metrics"])) {
          if ((text(metric["type"]) ?? "simple") !== "simple") {
            project.metrics.push({ raw: metric, at: whereOf(metric, file.path) })
          }
        }
      }
      for (const raw of records(top["metrics"])) {
        project.metrics.push({ raw, at: whereOf(raw, file.path) })
      }
      for (const raw of records(top["saved_queries"])) project.savedQueries.push({ raw, at: whereOf(raw, file.path) })
    }
    return { ...project, name }
  })

// ---------------------------------------------------------------------------------------------
// Building the model
// ---------------------------------------------------------------------------------------------

const aggregations: Record<string, SemanticModel.Aggregation> = {
  sum: "sum",
  count: "count",
  count_distinct: "count_distinct",
  average: "avg",
  avg: "avg",
  min: "min",
  max: "max",
  median: "median",
  percentile: "percentile",
  sum_boolean: "sum_boolean"
}

const grainNames = ["day", "week", "month", "quarter", "year"] as const

/** A window or offset (`7 days`, `30d`, `{ count: 1, granularity: month }`) in Sightline's words. */
const windowOf = (value: unknown): string | undefined => {
  const r = record(value)
  const raw = r === undefined ? text(value) : `${text(r["count"])} ${text(r["granularity"])}`
  const match = /^\s*(\d+)\s*(d|days?|weeks?|w|months?|quarters?|years?|y)\s*$/i.exec(raw ?? "")
  if (match === null) return undefined
  const unit = match[2]!.toLowerCase()
  const word = unit === "d" || unit.startsWith("day")
    ? "day"
    : unit === "w" || unit.startsWith("week")
    ? "week"
    : unit.startsWith("month")
    ? "month"
    : unit.startsWith("quarter")
    ? "quarter"
    : "year"
  return `${match[1]} ${word}${match[1] === "1" ? "" : "s"}`
}

/** A filter in any of its forms (a template, a list of them, the manifest's `where_filters`). */
const filtersOf = (value: unknown): ReadonlyArray<string> => {
  const r = record(value)
  if (r !== undefined) return records(r["where_filters"]).flatMap((f) => text(f["where_sql_template"]) ?? [])
  return texts(value)
}

/** A reference to a metric or measure: its name, or `{ name, filter, alias, ... }`. */
interface Ref {
  readonly name: string
  readonly alias: string | undefined
  readonly filters: ReadonlyArray<string>
  readonly raw: Record<string, unknown>
}
const refOf = (value: unknown): Ref | undefined => {
  const r = record(value)
  const name = r === undefined ? text(value) : text(r["name"])
  return name === undefined
    ? undefined
    : { name, alias: text(r?.["alias"]), filters: filtersOf(r?.["filter"]), raw: r ?? {} }
}

const template =
  /\{\{\s*(Dimension|TimeDimension|Entity)\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?\s*\)(?:\.grain\(\s*['"](\w+)['"]\s*\))?\s*\}\}/g

export const importProject = (
  files: ReadonlyArray<SemanticImport.SourceFile>,
  options: SemanticImport.Options
): Either.Either<SemanticImport.Imported, Unreadable> =>
  Either.map(readProject(files, options.schema), (project) => build(project, options))

const build = (project: Project, options: SemanticImport.Options): SemanticImport.Imported => {
  const report: Array<ReportLine> = []
  const say = (...line: Parameters<typeof SemanticImport.lineOf>) => report.push(SemanticImport.lineOf(...line))

  // Which model each entity is the key of.
  const keyOf = new Map<string, { model: Model; entity: Entity }>()
  for (const model of project.models) {
    for (const entity of model.entities) {
      if (entity.type === "primary" || entity.type === "unique" || entity.type === "natural") {
        if (!keyOf.has(entity.name)) keyOf.set(entity.name, { model, entity })
      }
    }
  }
  const modelOfMeasure = new Map<string, Model>()
  for (const model of project.models) for (const m of model.measures) modelOfMeasure.set(m.name, model)

  const tables = new Map<
    string,
    Mutable<SemanticModel.Table> & { measures: Array<SemanticModel.Measure>; filters: Array<SemanticModel.Filter> }
  >()
  const relationships: Array<SemanticModel.Relationship> = []

  // A dimension reference (`order__status`, `customer__region`) as the table and expression it reads.
  const dimensionRef = (
    reference: string,
    home: Model | undefined
  ): { model: Model; name: string; expr: string } | undefined => {
    const parts = reference.split("__")
    const name = parts.at(-1)!
    const entity = parts.at(-2)
    const model = entity === undefined ? home : keyOf.get(entity)?.model
    if (model === undefined) return undefined
    const dimension = model.dimensions.find((d) => d.name === name)
    if (dimension !== undefined) return { model, name, expr: dimension.expr ?? dimension.name }
    const key = model.entities.find((e) => e.name === name)
    return key === undefined ? undefined : { model, name, expr: key.expr }
  }

  /** A filter template as SQL over one table, or why it cannot be. */
  const translate = (where: string, home: Model | undefined): Either.Either<{ model: Model; expr: string }, string> => {
    const models = new Set<Model>()
    let failure: string | undefined
    const expr = where.replace(template, (_all, kind: string, reference: string) => {
      if (reference === "metric_time") {
        const time = home?.defaultTime === undefined ? undefined : dimensionRef(home.defaultTime, home)
        if (time === undefined) failure = "metric_time has no time dimension here"
        else models.add(time.model)
        return time?.expr ?? ""
      }
      const found = kind === "Entity" ?
        (() => {
          const key = keyOf.get(reference)
          return key === undefined ? undefined : { model: key.model, expr: key.entity.expr }
        })() :
        dimensionRef(reference, home)
      if (found === undefined) {
        failure = `${kind}('${reference}') names nothing the project defines`
        return ""
      }
      models.add(found.model)
      return found.expr
    })
    if (failure !== undefined) return Either.left(failure)
    if (/\{\{|\{%/.test(expr)) return Either.left("it uses Jinja other than Dimension, TimeDimension and Entity")
    if (models.size > 1) return Either.left("it reads dimensions of two semantic models at once")
    const model = [...models][0] ?? home
    return model === undefined ? Either.left("it names no dimension") : Either.right({ model, expr: expr.trim() })
  }

  // Tables, entities and dimensions.
  for (const model of project.models) {
    if (tables.has(model.name)) {
      say(model.at, "semantic model", model.name, "refused", "a semantic model of that name is defined before")
      continue
    }
    const primary = model.entities.find((e) => e.type === "primary" || e.type === "natural")
    const dimensions: Array<SemanticModel.Dimension> = []
    const timeDimensions: Array<SemanticModel.TimeDimension> = []
    for (const d of model.dimensions) {
      const base = {
        name: d.name,
        ...(d.expr === undefined || d.expr === d.name ? {} : { expr: d.expr }),
        ...(d.description === undefined ? {} : { description: d.description }),
        ...(d.synonyms.length === 0 ? {} : { synonyms: [...d.synonyms] })
      }
      if (d.type === "categorical") {
        dimensions.push(base)
        say(d.at, "dimension", `${model.name}.${d.name}`, "imported")
        continue
      }
      const at = grainNames.indexOf((d.granularity ?? "day") as typeof grainNames[number])
      if (at < 0) {
        timeDimensions.push(base)
        say(
          d.at,
          "dimension",
          `${model.name}.${d.name}`,
          "approximated",
          `its ${d.granularity} granularity is read by day and coarser`
        )
      } else {
        timeDimensions.push({ ...base, ...(at === 0 ? {} : { grains: grainNames.slice(at) }) })
        say(d.at, "dimension", `${model.name}.${d.name}`, "imported", `time, by ${d.granularity ?? "day"} and coarser`)
      }
    }
    const names = new Set([...dimensions, ...timeDimensions].map((d) => d.name))
    for (const entity of model.entities) {
      // An entity is grouped by as its key, as MetricFlow groups by `Entity('customer')`.
      if (!names.has(entity.name)) {
        dimensions.push({
          name: entity.name,
          ...(entity.expr === entity.name ? {} : { expr: entity.expr }),
          description: `the ${entity.name.replaceAll("_", " ")} key`
        })
        names.add(entity.name)
      }
      if (entity.type === "primary" || entity.type === "unique") {
        say(entity.at, "entity", `${model.name}.${entity.name}`, "imported", `${entity.type} key`)
      } else if (entity.type === "natural") {
        say(
          entity.at,
          "entity",
          `${model.name}.${entity.name}`,
          "approximated",
          "a natural key is joined as a primary key: validity windows are not read"
        )
      } else {
        const target = keyOf.get(entity.name)
        if (target === undefined || target.model === model) {
          say(
            entity.at,
            "entity",
            `${model.name}.${entity.name}`,
            "imported",
            "a dimension: no semantic model has it as its key"
          )
          continue
        }
        relationships.push({
          name: `${model.name}_${entity.name}`,
          left_table: model.name,
          right_table: target.model.name,
          relationship_type: "many_to_one",
          relationship_columns: [{ left_column: entity.expr, right_column: target.entity.expr }]
        })
        say(entity.at, "entity", `${model.name}.${entity.name}`, "imported", `joins ${target.model.name} many-to-one`)
      }
    }
    for (const entity of model.entities.filter((e) => e.type === "unique")) {
      const target = keyOf.get(entity.name)
      if (target !== undefined && target.model !== model) {
        relationships.push({
          name: `${model.name}_${entity.name}`,
          left_table: model.name,
          right_table: target.model.name,
          relationship_type: "one_to_one",
          relationship_columns: [{ left_column: entity.expr, right_column: target.entity.expr }]
        })
      }
    }
    tables.set(model.name, {
      name: model.name,
      ...(model.description === undefined ? {} : { description: model.description }),
      base_table: model.baseTable,
      ...(primary === undefined || /\W/.test(primary.expr) ? {} : { primary_key: { columns: [primary.expr] } }),
      ...(dimensions.length === 0 ? {} : { dimensions }),
      ...(timeDimensions.length === 0 ? {} : { time_dimensions: timeDimensions }),
      measures: [],
      filters: []
    })
    say(
      model.at,
      "semantic model",
      model.name,
      "imported",
      `table ${model.baseTable.schema === undefined ? "" : `${model.baseTable.schema}.`}${model.baseTable.table}`
    )
  }

  const measureNames = new Set<string>()
  const metricNames = new Set<string>()
  const addFilter = (model: Model, name: string, expr: string): string => {
    const table = tables.get(model.name)!
    let unique = name
    for (let i = 2; [...tables.values()].some((t) => t.filters.some((f) => f.name === unique)); i++) {
      unique = `${name}_${i}`
    }
    table.filters.push({ name: unique, expr })
    return unique
  }

  /** A dbt measure (or latest-spec simple metric) as a Sightline measure; why not, when it cannot be. */
  const measureOf = (
    model: Model,
    measure: Measure
  ): Either.Either<{ measure: SemanticModel.Measure; notes: Array<string> }, string> => {
    const raw = measure.raw
    const notes: Array<string> = []
    const agg = aggregations[text(raw["agg"]) ?? ""]
    if (agg === undefined) return Either.left(`its aggregation ${text(raw["agg"])} is not one Sightline computes`)
    const params = record(raw["agg_params"]) ?? raw
    const fraction = Number(text(params["percentile"]))
    const discrete = params["use_discrete_percentile"] === true || text(raw["percentile_type"]) === "discrete"
    const nonAdditive = record(raw["non_additive_dimension"])
    let expr = text(raw["expr"])
    if (expr !== undefined && (expr.trim() === "1" || expr.trim() === "*") && agg === "count") expr = undefined
    const timeName = text(raw["agg_time_dimension"]) ?? model.defaultTime
    const time = timeName === undefined
      ? undefined
      : model.dimensions.find((d) => d.name === timeName && d.type === "time")
    if (timeName !== undefined && time === undefined) {
      notes.push(`its time dimension ${timeName} is not one of ${model.name}'s`)
    }
    let nonAdditiveDimension: SemanticModel.NonAdditiveDimension | undefined
    if (nonAdditive !== undefined) {
      const groupings = texts(nonAdditive["window_groupings"] ?? nonAdditive["group_by"]).map((entity) =>
        model.entities.find((e) => e.name === entity)?.expr ?? entity
      )
      const choice = text(nonAdditive["window_choice"] ?? nonAdditive["window_agg"])
      nonAdditiveDimension = {
        name: `${model.name}.${text(nonAdditive["name"])}`,
        ...(choice === "min" ? { window_choice: "min" as const } : {}),
        ...(groupings.length === 0 ? {} : { window_groupings: groupings })
      }
    }
    const synonyms = synonymsOf(raw, measure.name)
    const filters: Array<string> = []
    for (const where of filtersOf(raw["filter"])) {
      const translated = translate(where, model)
      if (Either.isLeft(translated)) return Either.left(`its filter cannot be read: ${translated.left}`)
      filters.push(addFilter(translated.right.model, `${measure.name}_filter`, translated.right.expr))
    }
    const fill = raw["fill_nulls_with"]
    return Either.right({
      measure: {
        name: measure.name,
        agg,
        ...(expr === undefined ? {} : { expr }),
        ...(agg === "percentile" || (agg === "median" && discrete)
          ? {
            agg_params: {
              ...(agg === "percentile" ? { percentile: fraction > 1 ? fraction / 100 : fraction } : {}),
              ...(discrete ? { use_discrete_percentile: true } : {})
            }
          }
          : {}),
        ...(nonAdditiveDimension === undefined ? {} : { non_additive_dimension: nonAdditiveDimension }),
        ...(filters.length === 0 ? {} : { filters }),
        ...(time === undefined ? {} : { time_dimension: `${model.name}.${time.name}` }),
        ...(typeof fill === "number" ? { fill_nulls_with: fill } : {}),
        ...(raw["join_to_timespine"] === true ? { join_to_timespine: true } : {}),
        ...(text(raw["description"]) === undefined ? {} : { description: text(raw["description"]) }),
        ...(synonyms.length === 0 ? {} : { synonyms: [...synonyms] })
      },
      notes
    })
  }

  const addMeasure = (model: Model, measure: SemanticModel.Measure) => {
    tables.get(model.name)!.measures.push(measure)
    measureNames.add(measure.name)
  }
  for (const model of project.models) {
    for (const measure of model.measures) {
      if (measureNames.has(measure.name)) {
        say(measure.at, "measure", measure.name, "refused", "a measure of that name is defined before")
        continue
      }
      Either.match(measureOf(model, measure), {
        onLeft: (why) => say(measure.at, "type" in measure.raw ? "metric" : "measure", measure.name, "refused", why),
        onRight: ({ measure: m, notes }) => {
          addMeasure(model, m)
          say(
            measure.at,
            "type" in measure.raw ? "metric" : "measure",
            measure.name,
            notes.length === 0 ? "imported" : "approximated",
            notes.length === 0 ? `${m.agg} measure` : notes.join("; ")
          )
        }
      })
    }
  }

  /**
   * A metric input (a measure's or a simple metric's name, with filters of its own) as a metric of
   * the model: the name itself, or a copy of the measure with the filters, named `as`.
   */
  const input = (ref: Ref, as: string, extra: ReadonlyArray<string> = []): Either.Either<string, string> => {
    const filters = [...ref.filters, ...extra]
    if (
      filters.length === 0 && ref.raw["fill_nulls_with"] === undefined && ref.raw["join_to_timespine"] === undefined
    ) {
      return measureNames.has(ref.name) || metricNames.has(ref.name)
        ? Either.right(ref.name)
        : Either.left(`${ref.name} is not a metric or measure the import has`)
    }
    const model = modelOfMeasure.get(ref.name)
    const source = model === undefined
      ? undefined
      : [...tables.get(model.name)!.measures].find((m) => m.name === ref.name)
    if (model === undefined || source === undefined) {
      return Either.left(`${ref.name} has a filter but is not a measure: a filter on a derived input is not carried`)
    }
    const names: Array<string> = [...(source.filters ?? [])]
    for (const where of filters) {
      const translated = translate(where, model)
      if (Either.isLeft(translated)) return Either.left(`its filter cannot be read: ${translated.left}`)
      names.push(addFilter(translated.right.model, `${as}_filter`, translated.right.expr))
    }
    const fill = ref.raw["fill_nulls_with"]
    addMeasure(model, {
      ...source,
      name: as,
      ...(names.length === 0 ? {} : { filters: names }),
      ...(typeof fill === "number" ? { fill_nulls_with: fill } : {}),
      ...(ref.raw["join_to_timespine"] === true ? { join_to_timespine: true } : {})
    })
    return Either.right(as)
  }

  const metrics: Array<SemanticModel.DerivedMetric> = []
  const describe = (raw: Record<string, unknown>, name: string) => {
    const synonyms = synonymsOf(raw, name)
    return {
      ...(text(raw["description"]) === undefined ? {} : { description: text(raw["description"]) }),
      ...(synonyms.length === 0 ? {} : { synonyms: [...synonyms] })
    }
  }
  // Simple metrics first: the others read them.
  const ordered = [
    ...project.metrics.filter((m) => text(m.raw["type"]) === "simple"),
    ...project.metrics.filter((m) => text(m.raw["type"]) !== "simple")
  ]
  for (const { raw, at } of ordered) {
    const name = text(raw["name"])!
    const type = text(raw["type"]) ?? "simple"
    const params = { ...record(raw["type_params"]), ...raw }
    const metricFilters = filtersOf(raw["filter"])
    if (measureNames.has(name) && type !== "simple") {
      say(at, "metric", name, "refused", "a measure of that name is defined")
      continue
    }
    const outcome = (result: Either.Either<{ note?: string; approximated?: string }, string>) =>
      Either.match(result, {
        onLeft: (why) => say(at, "metric", name, "refused", why),
        onRight: ({ approximated, note }) => {
          metricNames.add(name)
          say(at, "metric", name, approximated === undefined ? "imported" : "approximated", approximated ?? note)
        }
      })
    outcome(Either.gen(function*() {
      switch (type) {
        case "simple": {
          const ref = refOf(params["measure"]) ??
            (measureNames.has(name) ? { name, alias: undefined, filters: [], raw: {} } : undefined)
          if (ref === undefined) return yield* Either.left("it names no measure")
          const plain = ref.name === name && ref.filters.length === 0 && metricFilters.length === 0 &&
            ref.raw["fill_nulls_with"] === undefined && ref.raw["join_to_timespine"] === undefined
          if (plain) {
            // The metric is its measure: its words are the measure's.
            const model = modelOfMeasure.get(name)
            const measures = model === undefined ? [] : tables.get(model.name)!.measures
            const index = measures.findIndex((m) => m.name === name)
            if (index >= 0) measures[index] = { ...measures[index]!, ...describe(raw, name) }
            return { note: "the measure of that name" }
          }
          if (measureNames.has(name)) return yield* Either.left("a measure of that name is defined")
          yield* input({ ...ref, raw: { ...ref.raw } }, name, metricFilters)
          const measures = [...tables.values()].flatMap((t) => t.measures)
          const made = measures.find((m) => m.name === name)
          if (made === undefined) {
            // An unfiltered alias of another measure: a derived metric that is that measure.
            metrics.push({
              name,
              type: "derived",
              expr: ref.name,
              metrics: [{ name: ref.name }],
              ...describe(raw, name)
            })
          } else Object.assign(made, describe(raw, name))
          return { note: `${ref.name}${ref.filters.length + metricFilters.length > 0 ? ", filtered" : ""}` }
        }
        case "ratio": {
          const numerator = refOf(params["numerator"])
          const denominator = refOf(params["denominator"])
          if (numerator === undefined || denominator === undefined) {
            return yield* Either.left("it needs a numerator and a denominator")
          }
          const top = numerator.filters.length + denominator.filters.length + metricFilters.length
          const n = yield* input(numerator, `${name}_numerator`, metricFilters)
          const d = yield* input(denominator, `${name}_denominator`, metricFilters)
          if (top === 0 && measureNames.has(n) && measureNames.has(d)) {
            metrics.push({ name, type: "ratio", numerator: n, denominator: d, ...describe(raw, name) })
          } else {
            metrics.push({
              name,
              type: "derived",
              expr: "numerator / denominator",
              metrics: [{ name: n, alias: "numerator" }, { name: d, alias: "denominator" }],
              ...describe(raw, name)
            })
          }
          return {}
        }
        case "derived": {
          const expr = text(params["expr"])
          if (expr === undefined) return yield* Either.left("it has no expr")
          const parsed = MetricExpression.parse(expr)
          if (Either.isLeft(parsed)) {
            return yield* Either.left(`its expr is SQL that derived metrics do not read (${parsed.left})`)
          }
          const inputs: Array<
            { name: string; alias?: string; offset_window?: string; offset_to_grain?: SemanticModel.Grain }
          > = []
          for (const value of records(params["metrics"] ?? params["input_metrics"])) {
            const ref = refOf(value)!
            const toGrain = value["offset_to_grain"] === undefined
              ? undefined
              : SemanticModel.grains.find((grain) => grain === text(value["offset_to_grain"])?.toLowerCase())
            if (value["offset_to_grain"] !== undefined && toGrain === undefined) {
              return yield* Either.left(
                `its input ${ref.name}'s offset_to_grain is not day, week, month, quarter or year (a time spine's custom granularity is not read)`
              )
            }
            if (toGrain !== undefined && value["offset_window"] !== undefined) {
              return yield* Either.left(`its input ${ref.name} has both an offset_window and an offset_to_grain`)
            }
            const offset = value["offset_window"] === undefined ? undefined : windowOf(value["offset_window"])
            if (value["offset_window"] !== undefined && offset === undefined) {
              return yield* Either.left(
                `its input ${ref.name}'s offset_window is not in days, weeks, months, quarters or years`
              )
            }
            const said = ref.alias ?? ref.name
            const used = yield* input(ref, `${name}_${said}`, metricFilters)
            inputs.push({
              name: used,
              ...(said === used ? {} : { alias: said }),
              ...(offset === undefined ? {} : { offset_window: offset }),
              ...(toGrain === undefined ? {} : { offset_to_grain: toGrain })
            })
          }
          if (inputs.length === 0) return yield* Either.left("it has no input metrics")
          const fill = raw["fill_nulls_with"] ?? params["fill_nulls_with"]
          metrics.push({
            name,
            type: "derived",
            expr,
            metrics: inputs as [typeof inputs[number], ...typeof inputs],
            ...(typeof fill === "number" ? { fill_nulls_with: fill } : {}),
            ...describe(raw, name)
          })
          return {}
        }
        case "cumulative": {
          const cumulative = { ...params, ...record(params["cumulative_type_params"]) }
          const ref = refOf(cumulative["measure"] ?? cumulative["input_metric"])
          if (ref === undefined) return yield* Either.left("it names no measure")
          const measure = yield* input(ref, `${name}_input`, metricFilters)
          const window = cumulative["window"] === undefined ? undefined : windowOf(cumulative["window"])
          if (cumulative["window"] !== undefined && window === undefined) {
            return yield* Either.left("its window is not in days, weeks, months, quarters or years")
          }
          const toDate = text(cumulative["grain_to_date"])
          if (toDate !== undefined && !grainNames.includes(toDate as typeof grainNames[number])) {
            return yield* Either.left(`its grain_to_date ${toDate} is not a grain Sightline reads`)
          }
          const periodAgg = text(cumulative["period_agg"])
          const approximated = [
            ...(window !== undefined && toDate !== undefined
              ? ["it gives both a window and a grain_to_date: the window is read"]
              : []),
            ...(periodAgg !== undefined && periodAgg !== "first" && periodAgg !== "last"
              ? [`period_agg ${periodAgg} is read as the period's last day`]
              : [])
          ]
          metrics.push({
            name,
            type: "cumulative",
            measure,
            ...(window !== undefined
              ? { window }
              : toDate !== undefined
              ? { grain_to_date: toDate as SemanticModel.Grain }
              : {}),
            // MetricFlow reads a coarser period at its first day unless told otherwise.
            period_agg: periodAgg === "last" || approximated.some((a) => a.startsWith("period_agg")) ? "last" : "first",
            ...describe(raw, name)
          })
          return approximated.length === 0 ? {} : { approximated: approximated.join("; ") }
        }
        case "conversion": {
          const conversion = { ...params, ...record(params["conversion_type_params"]) }
          const base = refOf(conversion["base_measure"] ?? conversion["base_metric"])
          const converted = refOf(conversion["conversion_measure"] ?? conversion["conversion_metric"])
          const entity = text(conversion["entity"])
          if (base === undefined || converted === undefined || entity === undefined) {
            return yield* Either.left("it needs a base and a conversion measure and an entity")
          }
          const baseMeasure = yield* input(base, `${name}_base`, metricFilters)
          const conversionMeasure = yield* input(converted, `${name}_conversion`)
          const baseModel = modelOfMeasure.get(base.name)
          const conversionModel = modelOfMeasure.get(converted.name)
          const baseEntity = baseModel?.entities.find((e) => e.name === entity)
          const conversionEntity = conversionModel?.entities.find((e) => e.name === entity)
          if (baseEntity === undefined || conversionEntity === undefined) {
            return yield* Either.left(`both measures' semantic models need the entity ${entity}`)
          }
          const window = conversion["window"] === undefined ? undefined : windowOf(conversion["window"])
          if (conversion["window"] !== undefined && window === undefined) {
            return yield* Either.left("its window is not in days, weeks, months, quarters or years")
          }
          const properties: Array<{ base_property: string; conversion_property: string }> = []
          for (const property of records(conversion["constant_properties"])) {
            const b = dimensionRef(text(property["base_property"]) ?? "", baseModel)
            const c = dimensionRef(text(property["conversion_property"]) ?? "", conversionModel)
            if (b === undefined || c === undefined) {
              return yield* Either.left("a constant property names no dimension of its measure's semantic model")
            }
            properties.push({ base_property: b.expr, conversion_property: c.expr })
          }
          const calculation = text(conversion["calculation"])
          metrics.push({
            name,
            type: "conversion",
            base_measure: baseMeasure,
            conversion_measure: conversionMeasure,
            entity: baseEntity.expr,
            ...(conversionEntity.expr === baseEntity.expr ? {} : { conversion_entity: conversionEntity.expr }),
            ...(window === undefined ? {} : { window }),
            ...(calculation === "conversions" ? { calculation: "conversions" as const } : {}),
            ...(properties.length === 0 ? {} : { constant_properties: properties }),
            ...describe(raw, name)
          })
          return {}
        }
        default:
          return yield* Either.left(`its type ${type} is not one MetricFlow defines`)
      }
    }))
  }

  const file: Mutable<SemanticModel.SemanticModelFile> = {
    name: SemanticImport.modelName(options.name ?? project.name ?? "dbt"),
    ...(options.connector === undefined ? {} : { connector: options.connector }),
    tables: [...tables.values()].map((t) => ({
      ...t,
      ...(t.measures.length === 0 ? { measures: undefined } : {}),
      ...(t.filters.length === 0 ? { filters: undefined } : {})
    })).map((t) =>
      Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined)) as SemanticModel.Table
    ) as unknown as [SemanticModel.Table, ...Array<SemanticModel.Table>],
    ...(relationships.length === 0 ? {} : { relationships }),
    ...(metrics.length === 0 ? {} : { metrics })
  }

  // A dbt custom granularity is a column of the time spine table, whatever it holds: Sightline's are
  // computed (a start month) and read no spine table, so the column's meaning cannot be known.
  for (const { raw, at } of project.granularities) {
    say(
      at,
      "custom granularity",
      text(raw["name"]) ?? "",
      "refused",
      `it is the time spine's column ${
        text(raw["column_name"]) ?? text(raw["name"]) ?? ""
      }, whose values Sightline does not read: define it under custom_granularities with its grain and start_month`
    )
  }

  // Saved queries: verified semantic queries, each compiled before it is kept.
  const verified: Array<SemanticModel.VerifiedQuery> = []
  for (const { raw, at } of project.savedQueries) {
    const name = text(raw["name"])!
    const query = savedQuery(raw, keyOf, dimensionRef)
    if (Either.isLeft(query)) {
      say(at, "saved query", name, "refused", query.left)
      continue
    }
    verified.push({
      name,
      question: text(raw["description"]) ?? text(raw["label"]) ?? name.replaceAll("_", " "),
      query: query.right.query
    })
    say(
      at,
      "saved query",
      name,
      query.right.approximated === undefined ? "imported" : "approximated",
      query.right.approximated ?? "a verified query"
    )
  }
  if (verified.length > 0) file.verified_queries = verified
  return { model: file as unknown as SemanticModel.SemanticModelFile, report }
}

/** A saved query's `query_params` as a semantic query. */
const savedQuery = (
  raw: Record<string, unknown>,
  keyOf: ReadonlyMap<string, { model: Model; entity: Entity }>,
  dimensionRef: (reference: string, home: Model | undefined) => { model: Model; name: string; expr: string } | undefined
): Either.Either<{ query: SemanticQuery.SemanticQuery; approximated?: string }, string> => {
  const params = record(raw["query_params"]) ?? raw
  const metrics = texts(params["metrics"])
  if (metrics.length === 0) return Either.left("it names no metrics")
  const dimensions: Array<string> = []
  let time: Mutable<SemanticQuery.TimeSelection> | undefined
  const call =
    /^\s*(Dimension|TimeDimension|Entity)\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?\s*\)(?:\.grain\(\s*['"](\w+)['"]\s*\))?\s*$/
  for (const groupBy of texts(params["group_by"])) {
    const match = call.exec(groupBy)
    if (match === null) return Either.left(`its group_by ${groupBy} is not a Dimension, TimeDimension or Entity`)
    const [, kind, reference, grainArg, grainCall] = match as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined
    ]
    const grain = grainArg ?? grainCall
    if (kind === "TimeDimension" || (kind === "Dimension" && grain !== undefined)) {
      if (grain !== undefined && !grainNames.includes(grain as typeof grainNames[number])) {
        return Either.left(`its grain ${grain} is not one Sightline reads`)
      }
      time = { ...time, grain: (grain ?? "day") as SemanticModel.Grain }
      if (reference !== "metric_time") {
        const found = dimensionRef(reference, undefined)
        if (found === undefined) return Either.left(`${reference} names no time dimension`)
        time.dimension = `${found.model.name}.${found.name}`
      }
      continue
    }
    if (kind === "Entity") {
      const key = keyOf.get(reference)
      if (key === undefined) return Either.left(`${reference} names no entity`)
      dimensions.push(`${key.model.name}.${reference}`)
      continue
    }
    const found = dimensionRef(reference, undefined)
    if (found === undefined) return Either.left(`${reference} names no dimension`)
    dimensions.push(`${found.model.name}.${found.name}`)
  }
  const filters: Array<SemanticQuery.DimensionFilter> = []
  const condition =
    /^\s*\{\{\s*(Dimension|TimeDimension)\(\s*['"]([^'"]+)['"](?:\s*,\s*['"](\w+)['"])?\s*\)\s*\}\}\s*(=|!=|<>|>=|<=|>|<|in|not in)\s*(.+?)\s*$/i
  const values = (literal: string) =>
    (/^\(.*\)$/s.test(literal) ? literal.slice(1, -1).split(",") : [literal]).map((v) => {
      const t = v.trim()
      return /^'.*'$/.test(t) ? t.slice(1, -1) : Number.isFinite(Number(t)) ? Number(t) : t
    })
  for (const where of filtersOf(params["where"])) {
    for (const part of where.split(/\s+and\s+/i)) {
      const match = condition.exec(part)
      if (match === null) return Either.left(`its where ${where} is not a comparison of a dimension with values`)
      const [, , reference, , op, literal] = match as unknown as [string, string, string, string, string, string]
      const operator = op.toLowerCase()
      const vals = values(literal)
      if (reference === "metric_time") {
        const day = String(vals[0]).slice(0, 10)
        const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
        time = {
          ...time,
          ...(operator === ">="
            ? { start: day }
            : operator === ">"
            ? { start: next }
            : operator === "<"
            ? { end: day }
            : operator === "<="
            ? { end: next }
            : {})
        }
        if (![">=", ">", "<", "<="].includes(operator)) {
          return Either.left("its where compares metric_time other than by a bound")
        }
        continue
      }
      const found = dimensionRef(reference, undefined)
      if (found === undefined) return Either.left(`${reference} names no dimension`)
      const mapped = operator === "<>" ? "!=" : operator === "not in" ? "not_in" : operator
      filters.push({
        dimension: `${found.model.name}.${found.name}`,
        operator: mapped as SemanticQuery.Operator,
        values: vals as unknown as SemanticQuery.DimensionFilter["values"]
      })
    }
  }
  const order: Array<SemanticQuery.OrderBy> = []
  let approximated: string | undefined
  for (const by of texts(params["order_by"])) {
    const metric =
      /^\s*(-)?\s*(?:Metric\(\s*['"](\w+)['"]\s*(?:,[^)]*)?\)|(\w+))(\.descending\(\s*(True|False)\s*\))?\s*$/.exec(by)
    if (metric === null) {
      approximated = `its order_by ${by} is not read`
      continue
    }
    const name = metric[2] ?? metric[3]!
    order.push({
      by: name === "metric_time" ? "time" : name,
      direction: metric[1] === "-" || metric[5] === "True" ? "desc" : "asc"
    })
  }
  const limit = Number(text(params["limit"]))
  return Either.right({
    query: {
      metrics,
      ...(dimensions.length === 0 ? {} : { dimensions }),
      ...(time === undefined ? {} : { time }),
      ...(filters.length === 0 ? {} : { filters }),
      ...(order.length === 0 ? {} : { order }),
      ...(Number.isInteger(limit) && limit > 0 ? { limit } : {})
    },
    ...(approximated === undefined ? {} : { approximated })
  })
}

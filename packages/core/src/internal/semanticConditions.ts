/**
 * A semantic query's conditions as SQL: a dimension filter, and the entities with rows in each of
 * several values (`having_each`), read through the caller's row filters.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type { SemanticModel as Model, Table } from "../SemanticModel.js"
import type * as SemanticQuery from "../SemanticQuery.js"
import {
  canonical,
  CompileError,
  depth,
  type FieldRef,
  joined,
  projected,
  reachable,
  resolveField,
  same,
  words,
  type Writer
} from "./semanticSql.js"

/** A `having_each` resolved: the entity, its key, the dimension, and the table whose rows link them. */
export interface Having {
  readonly entity: Table
  readonly key: string
  readonly field: FieldRef
  readonly bridge: string
  readonly values: ReadonlyArray<string | number | boolean>
}

export const havingOf = (model: Model, having: SemanticQuery.HavingEach): Either.Either<Having, CompileError> =>
  Either.gen(function*() {
    const entity = model.tables.find((t) => same(t.name, having.entity))
    if (entity === undefined) {
      return yield* Either.left(
        new CompileError({ message: `no table named ${having.entity} in model ${model.file.name}` })
      )
    }
    const keys = entity.primary_key?.columns ?? []
    if (keys.length !== 1) {
      return yield* Either.left(
        new CompileError({
          message: `${entity.name} needs a primary key of one column to keep those with rows in each value`
        })
      )
    }
    const field = yield* resolveField(model, having.dimension)
    if (field.kind === "time") {
      return yield* Either.left(
        new CompileError({ message: `${having.dimension} is a time dimension: name periods instead` })
      )
    }
    // Along many-to-one relationships from the entity, each of its rows has one value: none has two.
    if (reachable(model, entity.name).has(field.table.name)) {
      return yield* Either.left(
        new CompileError({
          message: `each of the ${words(entity.name)} has one ${words(field.name)}: none has rows in each of several`
        })
      )
    }
    // The rows that link them: the nearest table reaching both.
    const bridges = model.tables.flatMap((t) => {
      const reach = reachable(model, t.name)
      return reach.has(entity.name) && reach.has(field.table.name)
        ? [{ name: t.name, distance: depth(reach, entity.name) + depth(reach, field.table.name) }]
        : []
    }).sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
    if (bridges.length === 0) {
      return yield* Either.left(
        new CompileError({
          message: `no table's rows lead both to ${words(entity.name)} and to ${words(field.name)} along many-to-one ` +
            "relationships"
        })
      )
    }
    return { entity, key: keys[0]!, field, bridge: bridges[0]!.name, values: having.values }
  })

/** The keys of the entities that have rows (of the bridge) with `value`, under the caller's row filters. */
export const semiJoin = (w: Writer, model: Model, having: Having, value: string | number | boolean): string => {
  const reach = reachable(model, having.bridge)
  const needed = new Set<string>()
  for (const table of [having.entity.name, having.field.table.name]) {
    for (let at: string | undefined = table; at !== undefined; at = reach.get(at)?.from) needed.add(at)
  }
  const { column, columns } = projected(w)
  const key = column(having.entity.name, having.key, `k__${having.key}`)
  const ref = column(having.field.table.name, having.field.expr, `d__${having.field.name}`)
  const from = joined(w, model, reach, needed, column, columns)
  return `SELECT ${key} FROM ${from} WHERE ${
    condition(w, ref, { dimension: having.field.name, operator: "=", values: [value] }, having.field)
  }`
}

export const condition = (
  w: Writer,
  value: string,
  filter: SemanticQuery.DimensionFilter,
  field: FieldRef
): string => {
  const values = filter.values.map((v) => canonical(field, v))
  switch (filter.operator) {
    case "=":
    case "in":
      return values.length === 1
        ? `${value} = ${w.bind(values[0]!)}`
        : `${value} IN (${values.map((v) => w.bind(v)).join(", ")})`
    case "!=":
    case "not_in":
      return values.length === 1
        ? `${value} <> ${w.bind(values[0]!)}`
        : `${value} NOT IN (${values.map((v) => w.bind(v)).join(", ")})`
    case ">":
    case ">=":
    case "<":
    case "<=":
      return `${value} ${filter.operator} ${w.bind(values[0]!)}`
    case "between":
      return `${value} BETWEEN ${w.bind(values[0]!)} AND ${w.bind(values[1] ?? values[0]!)}`
    case "contains":
      return `LOWER(${value}) LIKE ${w.bind(`%${String(values[0]).toLowerCase().replace(/[\\%_]/g, "\\$&")}%`)}`
  }
}

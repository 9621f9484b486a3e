/**
 * Source files read as plain values that remember where they were written: each object and array
 * of a YAML (or JSON, which YAML reads) file knows its line, so an importer's report names the file
 * and line of every construct.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Yaml from "yaml"

export interface Where {
  readonly file: string
  readonly line?: number | undefined
}

const places = new WeakMap<object, Where>()

/** Marks a value built by an importer (a JavaScript model's object) with where it was written. */
export const place = <A extends object>(value: A, where: Where): A => {
  places.set(value, where)
  return value
}

/** Where a value read by `read` was written (the file alone when it was not an object or array). */
export const whereOf = (value: unknown, file: string): Where =>
  (typeof value === "object" && value !== null ? places.get(value) : undefined) ?? { file }

/** A file that does not read, where. */
export interface Unreadable extends Where {
  readonly message: string
}

/** Reads YAML or JSON text into plain values, each object and array marked with its line. */
export const read = (file: string, text: string): Either.Either<unknown, Unreadable> => {
  const lineCounter = new Yaml.LineCounter()
  const document = Yaml.parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  const lineAt = (node: Yaml.Node | null | undefined) =>
    node?.range === undefined || node.range === null ? undefined : lineCounter.linePos(node.range[0]).line
  if (document.errors.length > 0) {
    const error = document.errors[0]!
    return Either.left({ file, line: lineCounter.linePos(error.pos[0]).line, message: error.message.split("\n")[0]! })
  }
  const plain = (node: unknown): unknown => {
    if (Yaml.isMap(node)) {
      const out: Record<string, unknown> = {}
      for (const pair of node.items) {
        const key = Yaml.isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
        // A null is an absent key: `offset_to_grain: null` says nothing.
        const value = plain(pair.value)
        if (value !== null && value !== undefined) out[key] = value
      }
      places.set(out, { file, line: lineAt(node) })
      return out
    }
    if (Yaml.isSeq(node)) {
      const out = node.items.map(plain)
      places.set(out, { file, line: lineAt(node) })
      return out
    }
    if (Yaml.isScalar(node)) return node.value
    if (Yaml.isAlias(node)) return plain(node.resolve(document))
    return node ?? undefined
  }
  return Either.right(plain(document.contents))
}

/** A value as a record, or nothing. */
export const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

/** A value as a list of records (a single record as a list of one; anything else as none). */
export const records = (value: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(value)
    ? value.flatMap((item): Array<Record<string, unknown>> => {
      const r = record(item)
      return r === undefined ? [] : [r]
    })
    : []

/** A value as text, or nothing. */
export const text = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : undefined

/** A value as a list of texts. */
export const texts = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.flatMap((item) => text(item) ?? []) : text(value) === undefined ? [] : [text(value)!]

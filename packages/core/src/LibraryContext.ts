/**
 * The Context Library as the agent reads it: ontology notes (Markdown files) and saved queries
 * (`.sql` files with named `:parameters`), always from the snapshot the caller may read under the
 * OWNERS rules (`Library.snapshotFor`), never from main as a whole.
 *
 * A saved query may name its connector in a header comment (`-- connector: 3`) and describe itself
 * in its first comment line. Its `:name` parameters are bound as query parameters (`$1`, `$2`, ...),
 * never spliced into the SQL; `::casts` are left alone.
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import * as Utf8 from "./internal/utf8.js"
import type * as LibraryDiff from "./LibraryDiff.js"

/**
 * A saved query of the library.
 *
 * @since 0.1.0
 * @category models
 */
export interface SavedQuery {
  readonly path: string
  readonly sql: string
  /** The named parameters, in order of first use. */
  readonly params: ReadonlyArray<string>
  /** The connector its header names (`-- connector: <id>`). */
  readonly connectorId?: number | undefined
  /** Its first comment line. */
  readonly description?: string | undefined
}

/**
 * A note of the library.
 *
 * @since 0.1.0
 * @category models
 */
export interface Note {
  readonly path: string
  readonly text: string
}

const isOwners = (path: string) => path === "OWNERS" || path.endsWith("/OWNERS")

/**
 * The readable text files of a snapshot (OWNERS files left out: they govern, they do not inform).
 *
 * @since 0.1.0
 * @category utils
 */
export const textFiles = (files: LibraryDiff.Files): ReadonlyArray<Note> =>
  [...HashMap.entries(files)]
    .filter(([path]) => !isOwners(path))
    .map(([path, bytes]) => ({ path, text: Utf8.decodeText(bytes) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))

const namedParam = /(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g

/**
 * The saved queries of a snapshot.
 *
 * @since 0.1.0
 * @category utils
 */
export const savedQueries = (files: LibraryDiff.Files): ReadonlyArray<SavedQuery> =>
  textFiles(files).filter((file) => file.path.endsWith(".sql")).map((file) => {
    const params: Array<string> = []
    for (const match of file.text.matchAll(namedParam)) if (!params.includes(match[1]!)) params.push(match[1]!)
    const connector = /^\s*--\s*connector:\s*(\d+)\s*$/im.exec(file.text)
    const description = file.text.split("\n").map((line) => /^\s*--\s*(.+)$/.exec(line)?.[1]?.trim())
      .find((line) => line !== undefined && !/^connector:/i.test(line))
    return {
      path: file.path,
      sql: file.text,
      params,
      ...(connector === null ? {} : { connectorId: Number(connector[1]) }),
      ...(description === undefined ? {} : { description })
    }
  })

/**
 * The notes of a snapshot: its Markdown files.
 *
 * @since 0.1.0
 * @category utils
 */
export const notes = (files: LibraryDiff.Files): ReadonlyArray<Note> =>
  textFiles(files).filter((file) => /\.(md|markdown)$/i.test(file.path))

/**
 * A statement with its named parameters turned into positional ones.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bound {
  readonly text: string
  readonly params: ReadonlyArray<string | number | boolean | null>
  /** Parameters the statement names that `values` lacks. */
  readonly missing: ReadonlyArray<string>
}

/**
 * Binds `:name` parameters as `$1..$n` with the given values (each name once, however often it
 * appears), numbered after `offset` placeholders the statement already has.
 *
 * @since 0.1.0
 * @category utils
 */
export const bindNamedParams = (sql: string, values: Readonly<Record<string, unknown>>, offset = 0): Bound => {
  const order: Array<string> = []
  const missing: Array<string> = []
  const text = sql.replace(namedParam, (_, name: string) => {
    if (!Object.hasOwn(values, name) && !missing.includes(name)) missing.push(name)
    if (!order.includes(name)) order.push(name)
    return `$${offset + order.indexOf(name) + 1}`
  })
  const params = order.map((name) => {
    const value = values[name]
    return value === undefined || value === null
      ? null
      : typeof value === "number" || typeof value === "boolean" || typeof value === "string"
      ? value
      : JSON.stringify(value)
  })
  return { text, params, missing }
}

/**
 * A search hit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Hit {
  readonly path: string
  readonly snippet: string
}

/**
 * Files whose path or text contains the query's words, best first (at most `limit`).
 *
 * @since 0.1.0
 * @category utils
 */
export const search = (files: LibraryDiff.Files, query: string, limit = 10): ReadonlyArray<Hit> => {
  const words = query.toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length > 1)
  if (words.length === 0) return []
  return textFiles(files)
    .map((file) => {
      const text = file.text.toLowerCase()
      const score = words.filter((word) => file.path.toLowerCase().includes(word) || text.includes(word)).length
      // The snippet shows the text around the first word found in it.
      const at = Math.max(0, words.map((word) => text.indexOf(word)).find((i) => i >= 0) ?? 0)
      return {
        path: file.path,
        score,
        snippet: file.text.slice(Math.max(0, at - 80), at + 160).replace(/\s+/g, " ").trim()
      }
    })
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : 1))
    .slice(0, limit)
    .map(({ path, snippet }) => ({ path, snippet }))
}

/**
 * The most note text the system prompt carries; the rest is reachable with `search_library`.
 *
 * @since 0.1.0
 * @category constants
 */
export const promptNoteBudget = 8_000

/**
 * The library section of the system prompt: saved queries with their parameters, then notes within the budget.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (files: LibraryDiff.Files): string => {
  const queries = savedQueries(files)
  const lines: Array<string> = []
  if (queries.length > 0) {
    lines.push("### Saved queries (run with run_saved_query)")
    for (const query of queries) {
      const params = query.params.length === 0 ? "no parameters" : `parameters: ${query.params.join(", ")}`
      const connector = query.connectorId === undefined ? "" : `, connector ${query.connectorId}`
      lines.push(
        `- ${query.path} (${params}${connector})${query.description === undefined ? "" : `: ${query.description}`}`
      )
    }
  }
  let budget = promptNoteBudget
  const shown = notes(files)
  if (shown.length > 0) lines.push("### Ontology notes")
  for (const note of shown) {
    if (budget <= 0) {
      lines.push(`- ${note.path} (not shown: read it with read_library_file)`)
      continue
    }
    const text = note.text.length > budget ? `${note.text.slice(0, budget)}…` : note.text
    budget -= text.length
    lines.push(`#### ${note.path}`, text.trim())
  }
  return lines.join("\n")
}

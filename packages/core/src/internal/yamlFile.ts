/**
 * A library file in YAML decoded with a schema: YAML first, then the schema, every problem naming
 * the file and, where it has one, the line. Semantic models and evaluation sets are read with it.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Yaml from "yaml"

/** What is wrong with a file, where. */
export interface Problem {
  readonly path: string
  /** 1-based; absent when the problem is not at one place in the file. */
  readonly line?: number | undefined
  readonly message: string
}

/** A problem as one line: `semantic/demo.yaml:12: ...`. */
export const formatProblem = (problem: Problem): string =>
  `${problem.path}${problem.line === undefined ? "" : `:${problem.line}`}: ${problem.message}`

/** Decodes the YAML text of the file at `path` with `schema` (excess properties are problems). */
export const decode = <A, I>(
  schema: Schema.Schema<A, I>,
  path: string,
  text: string
): Either.Either<A, ReadonlyArray<Problem>> => {
  const lineCounter = new Yaml.LineCounter()
  const document = Yaml.parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  const lineAt = (offset: number | undefined) => offset === undefined ? undefined : lineCounter.linePos(offset).line
  if (document.errors.length > 0) {
    return Either.left(document.errors.map((error) => ({
      path,
      line: lineAt(error.pos[0]),
      message: error.message.split("\n")[0]!
    })))
  }
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(document.toJS())
  if (Either.isRight(decoded)) return Either.right(decoded.right)
  // An optional field's union with `undefined` adds "Expected undefined" beside the real problem,
  // and a union of literals one issue per literal: one line per path says it all.
  const issues: Array<ParseResult.ArrayFormatterIssue> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(decoded.left)) {
    if (issue.message.startsWith("Expected undefined")) continue
    const expected = /^Expected (.+), actual (.+)$/.exec(issue.message)
    const same = issues.find((other) => other.path.join(".") === issue.path.join("."))
    const before = same === undefined ? null : /^Expected (.+), actual (.+)$/.exec(same.message)
    if (same !== undefined && expected !== null && before !== null && before[2] === expected[2]) {
      issues[issues.indexOf(same)] = {
        ...same,
        message: `Expected ${before[1]} | ${expected[1]}, actual ${expected[2]}`
      }
      continue
    }
    issues.push(issue)
  }
  return Either.left(issues.map((issue) => {
    // The deepest node of the issue's path that the document has, for its line.
    let node: unknown = undefined
    for (let depth = issue.path.length; depth >= 0 && node === undefined; depth--) {
      node = document.getIn(issue.path.slice(0, depth) as Array<PropertyKey>, true)
    }
    const range = Yaml.isNode(node) ? node.range : undefined
    const where = issue.path.length === 0 ? "" : `${issue.path.join(".")}: `
    return { path, line: lineAt(range?.[0]), message: `${where}${issue.message}` }
  }))
}

/**
 * The file with one more item in the list at `key` (`fresh` with that list when there is no file),
 * its comments, order and style kept; none when it does not read as YAML with a list there.
 */
export const appendTo = (text: string | undefined, key: string, item: unknown, fresh: Record<string, unknown>) => {
  const document = text === undefined ? new Yaml.Document(fresh) : Yaml.parseDocument(text)
  if (document.errors.length > 0) return Option.none<string>()
  const list = document.get(key)
  // A block list is added to as text, after its last item and at its indentation: nothing else in
  // the file is written again, so a reviewer's diff is the item alone.
  if (text !== undefined && Yaml.isSeq(list) && !list.flow && list.items.length > 0 && list.range) {
    const start = list.range[0]
    const indent = " ".repeat(start - (text.lastIndexOf("\n", start - 1) + 1))
    const lines = Yaml.stringify([item], { lineWidth: 0 }).trimEnd().split("\n")
    const before = text.slice(0, list.range[1])
    return Option.some(
      `${before}${before.endsWith("\n") ? "" : "\n"}${lines.map((line) => `${indent}${line}`).join("\n")}\n${
        text.slice(list.range[1])
      }`
    )
  }
  if (list === undefined || list === null) document.set(key, document.createNode([item]))
  else if (Yaml.isSeq(list)) list.add(document.createNode(item))
  else return Option.none<string>()
  return Option.some(document.toString({ lineWidth: 0 }))
}

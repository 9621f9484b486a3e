/**
 * Decode failures in words a person reads: one short line per field, without Effect's type
 * renderings (`{ readonly a?: … }`, `string & Brand<"AppId">`) or the noise of optional unions
 * (`Expected undefined`). One home for /v2 and the Connect surfaces.
 *
 * @internal
 */
import * as InputGuard from "./inputGuard.js"

/** A decode issue as `ParseResult.ArrayFormatter` (and `HttpApiDecodeError`) give it. */
export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const expectedActual = /^Expected ([\s\S]*), actual ([\s\S]*)$/
const literal = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)$/

// What a rendered type is, for a person: objects and arrays by their kind, brands dropped.
const describeType = (type: string): string => {
  const bare = type.replace(/\s*&\s*Brand<"[^"]*">/g, "").trim()
  if (bare.startsWith("{")) return "a JSON object"
  if (bare.startsWith("ReadonlyArray<") || bare.startsWith("readonly [") || bare.startsWith("[")) return "an array"
  const members = bare.split(" | ").map((member) => member.trim())
  if (members.length > 1 && members.every((member) => literal.test(member))) return `one of ${members.join(", ")}`
  return bare
}

// The issues of one field, merged: an optional field's `Expected undefined` says nothing when
// another issue names what was expected, and a union of literals fails once per literal.
const fieldMessages = (messages: ReadonlyArray<string>): Array<string> => {
  const expected: Array<string> = []
  let actual: string | undefined
  const other: Array<string> = []
  for (const message of messages) {
    const match = expectedActual.exec(message)
    if (match === null) {
      other.push(message)
      continue
    }
    actual ??= match[2]!
    if (match[2] === actual) expected.push(match[1]!)
    else other.push(message)
  }
  const named = expected.filter((type) => type !== "undefined")
  const kept = named.length > 0 ? named : expected
  const merged = kept.length === 0
    ? []
    : [
      kept.length > 1 && kept.every((type) => literal.test(type))
        ? `Expected one of ${kept.join(", ")}, actual ${actual}`
        : `Expected ${[...new Set(kept.map(describeType))].join(" or ")}, actual ${actual}`
    ]
  return [...new Set([...merged, ...other])]
}

/**
 * The issues as short lines, `field: problem`, at most five of 180 characters each (and a count of
 * the rest), the whole under 1 KB.
 */
export const describe = (prefix: string, issues: ReadonlyArray<Issue>, fallback: string): string => {
  const keyOf = (issue: Issue) => issue.path.map(String).join(".")
  const isUndefinedMember = (issue: Issue) => /^Expected undefined, actual /.test(issue.message)
  // An optional field fails its `undefined` member too; that says nothing once another issue at the
  // field or inside it says what is wrong.
  const explained = issues.filter((issue) => !isUndefinedMember(issue)).map(keyOf)
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    const key = keyOf(issue)
    if (
      isUndefinedMember(issue) &&
      explained.some((other) => other === key || key === "" || other.startsWith(`${key}.`))
    ) continue
    byPath.set(key, [...(byPath.get(key) ?? []), issue.message])
  }
  const lines = [...byPath].flatMap(([path, messages]) =>
    fieldMessages(messages).map((message) => InputGuard.shorten(path === "" ? message : `${path}: ${message}`, 180))
  )
  const shown = lines.slice(0, 5)
  const more = lines.length > 5 ? ` (and ${lines.length - 5} more)` : ""
  return InputGuard.shorten(`${prefix}: ${shown.length === 0 ? fallback : shown.join("; ")}${more}`, 1000)
}

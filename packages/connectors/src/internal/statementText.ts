/**
 * A statement's text as a trace may hold it (`db.query.text`): its shape without its values. SQL a
 * model writes carries the values it filters on as literals (`WHERE region = 'EU'`), and values are
 * data the trace's readers may not see, so every literal becomes `?`: strings (and MySQL's
 * double-quoted ones), dollar-quoted bodies, numbers and comments. Identifiers and bound
 * placeholders (`$1`) stay. At most 2,000 characters.
 *
 * @internal
 */

const MAX = 2_000

/** The text with its literals replaced; `doubleQuotedStrings` for MySQL, where `"…"` is a string. */
export const withoutValues = (sql: string, options: { readonly doubleQuotedStrings: boolean }): string => {
  const patterns = [
    // Comments could hold anything.
    String.raw`--[^\n]*`,
    String.raw`/\*[\s\S]*?\*/`,
    // PostgreSQL's dollar quoting: $$…$$, $tag$…$tag$.
    String.raw`\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$`,
    // Strings with doubled or (MySQL, E'…') backslashed quotes.
    String.raw`[EeXxBbNn]?'(?:[^'\\]|''|\\[\s\S])*'`,
    ...(options.doubleQuotedStrings ? [String.raw`"(?:[^"\\]|""|\\[\s\S])*"`] : [String.raw`"(?:[^"]|"")*"`]),
    // Numbers that are not part of a name or a placeholder.
    String.raw`(?<![A-Za-z0-9_$.])\d+(?:\.\d*)?(?:[eE][+-]?\d+)?`
  ]
  const token = new RegExp(patterns.join("|"), "g")
  const text = sql.replace(token, (match) =>
    // A PostgreSQL identifier in double quotes is a name, not a value.
    !options.doubleQuotedStrings && match.startsWith("\"")
      ? match
      : match.startsWith("--") || match.startsWith("/*")
      ? ""
      : "?")
    .replace(/\s+/g, " ")
    .trim()
  return text.length > MAX ? `${text.slice(0, MAX - 1)}…` : text
}

/** The statement's first keyword (`SELECT`, `WITH`, …), upper-cased, for `db.operation.name`. */
export const operationOf = (sql: string): string | undefined =>
  /^\s*(?:(?:--[^\n]*\n|\/\*[\s\S]*?\*\/)\s*)*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase()

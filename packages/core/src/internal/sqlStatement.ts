/**
 * Is a text one query, and nothing else? The rule for SQL the organization writes into its library
 * (verified queries), which a change's checks plan against the connector before anyone reviewed it.
 *
 * It reads the text as every dialect Sightline speaks lexes it (PostgreSQL, MySQL and DuckDB):
 * strings, quoted identifiers, dollar-quoted bodies and comments are opaque, and what is left are
 * words and punctuation. A query is one statement (a trailing `;` aside) that begins with `SELECT`
 * or `WITH` (after any opening parentheses) and has no word that writes or defines something: a
 * data-modifying CTE (`WITH … INSERT`), `SELECT … INTO`, `FOR UPDATE`. So a second statement, `SET`
 * and `ANALYZE` are refused too. A column whose name is such a word is written quoted.
 *
 * @internal
 */

// How each dialect reads what is opaque. They disagree (a backslash escapes a quote in MySQL only,
// `#` starts a comment in MySQL and is an operator in PostgreSQL), so a text is read each way and
// must be one query in every reading: no trick of one dialect's quoting can hide a second statement
// from the check.
const lexers: ReadonlyArray<RegExp> = [
  // PostgreSQL and DuckDB: `''` doubles a quote, a backslash only escapes in `E'…'`.
  [
    String.raw`--[^\n]*`,
    String.raw`/\*[\s\S]*?(?:\*/|$)`,
    String.raw`\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?(?:\$\1\$|$)`,
    String.raw`[Ee]'(?:[^'\\]|''|\\[\s\S])*(?:'|$)`,
    String.raw`'(?:[^']|'')*(?:'|$)`,
    String.raw`"(?:[^"]|"")*(?:"|$)`
  ],
  // MySQL: backslash escapes in both quotes, `#` comments, backquoted names.
  [
    String.raw`--[^\n]*`,
    String.raw`#[^\n]*`,
    String.raw`/\*[\s\S]*?(?:\*/|$)`,
    String.raw`'(?:[^'\\]|''|\\[\s\S])*(?:'|$)`,
    String.raw`"(?:[^"\\]|""|\\[\s\S])*(?:"|$)`,
    String.raw`\x60(?:[^\x60]|\x60\x60)*(?:\x60|$)`
  ]
].map((patterns) => new RegExp(patterns.join("|"), "g"))

// A query that begins with SELECT or WITH writes only through these (a data-modifying CTE,
// `SELECT … INTO`, `FOR UPDATE`); the rest define or run things and have no place in one either.
// Words that are also common column names (`comment`, `share`, `set`) are left to the database's
// read-only transaction, which refuses what they could do.
const refused = new Set([
  "alter",
  "analyze",
  "call",
  "copy",
  "create",
  "delete",
  "drop",
  "execute",
  "grant",
  "insert",
  "into",
  "merge",
  "returning",
  "revoke",
  "truncate",
  "update",
  "upsert",
  "vacuum"
])

/**
 * Why the text is not one query (`undefined` when it is): a sentence naming what was found.
 */
export const notOneQuery = (sql: string): string | undefined => {
  for (const lexer of lexers) {
    const problem = inReading(sql.replace(lexer, " "))
    if (problem !== undefined) return problem
  }
  return undefined
}

const inReading = (bare: string): string | undefined => {
  const statements = bare.split(";").filter((part) => part.trim() !== "")
  if (statements.length === 0) return "it is empty"
  if (statements.length > 1) return "it is more than one statement"
  const words = statements[0]!.match(/[A-Za-z_][A-Za-z0-9_$]*/g) ?? []
  const first = statements[0]!.replace(/^[\s(]+/, "").match(/^[A-Za-z_]+/)?.[0]?.toLowerCase()
  if (first !== "select" && first !== "with") return "it does not begin with SELECT or WITH"
  const word = words.find((w) => refused.has(w.toLowerCase()))
  return word === undefined ? undefined : `it uses ${word.toUpperCase()}, which no query needs`
}

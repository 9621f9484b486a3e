/**
 * Text renderings of query results: the dataframe preview of a cell and the CSV of a download.
 *
 * @internal
 */

/** A value as a table cell shows it. */
export const cellText = (value: unknown): string =>
  value === null || value === undefined
    ? ""
    : typeof value === "string"
    ? value
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)

/** A fixed-width preview of the first rows, with the row count below (as a notebook prints a dataframe). */
export const preview = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
  totalLabel: string
): string => {
  const maxWidth = 40
  const clip = (text: string) => text.length > maxWidth ? `${text.slice(0, maxWidth - 1)}…` : text
  const body = rows.map((row) => row.map((value) => clip(cellText(value).replace(/\s+/g, " "))))
  const widths = columns.map((name, i) => Math.max(clip(name).length, ...body.map((row) => row[i]?.length ?? 0)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(columns.map(clip)), ...body.map(line), "", totalLabel].join("\n")
}

// A spreadsheet reads a cell that begins with one of these as a formula (CSV injection). A plain
// number (a negative amount) is data and stays as it is.
const formulaStart = /^[=+\-@\t\r]/
const plainNumber = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

const csvField = (value: unknown): string => {
  const raw = cellText(value)
  // OWASP's advice: a leading single quote makes the spreadsheet show the text, not evaluate it.
  const text = formulaStart.test(raw) && !plainNumber.test(raw) ? `'${raw}` : raw
  return /[",\n\r\t]/.test(text) || text !== raw ? `"${text.replace(/"/g, "\"\"")}"` : text
}

/** RFC 4180 CSV with a header row and CRLF line ends; cells that would read as formulas are neutralised. */
export const csv = (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<unknown>>): string =>
  [columns, ...rows].map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n"

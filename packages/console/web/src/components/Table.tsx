const numeric = /^-?\d+(\.\d+)?$/
// Columns whose numbers name something (an id, a year, a code) are shown as they are.
const naming = /(^|_|\b)(id|number|no|code|year|zip)$/i
const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 })

/** A cell as shown: numbers grouped and rounded as the answer's text writes them, except names. */
const cell = (value: unknown, column: string): { readonly text: string; readonly number: boolean } => {
  if (value === null || value === undefined) return { text: "", number: false }
  const text = String(value)
  if ((typeof value !== "number" && typeof value !== "string") || !numeric.test(text)) return { text, number: false }
  return { text: naming.test(column) ? text : grouped.format(Number(text)), number: true }
}

/** A result table asset (`{columns, rows}`), scrollable, with its row count; numbers right-aligned. */
export function Table({ content, name }: { readonly content: string; readonly name: string }) {
  let table: { columns: Array<{ name: string }>; rows: Array<Array<unknown>>; total_rows?: number }
  try {
    table = JSON.parse(content)
  } catch {
    return <p className="error">Table {name} could not be read.</p>
  }
  const total = table.total_rows ?? table.rows.length
  return (
    <div className="table-block">
      <div className="table-scroll" tabIndex={0} role="region" aria-label={`Table ${name}`}>
        <table>
          <thead>
            <tr>{table.columns.map((c) => <th key={c.name} scope="col">{c.name}</th>)}</tr>
          </thead>
          <tbody>
            {table.rows.map((row, i) => (
              <tr key={i}>
                {row.map((value, j) => {
                  const shown = cell(value, table.columns[j]?.name ?? "")
                  return <td key={j} className={shown.number ? "num" : undefined}>{shown.text}</td>
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted table-count">
        {total === table.rows.length ? `${total} rows` : `${table.rows.length} of ${total} rows shown`}
      </p>
    </div>
  )
}

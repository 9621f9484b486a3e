/** A result table asset (`{columns, rows}`), scrollable, with its row count. */
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
              <tr key={i}>{row.map((value, j) => <td key={j}>{value === null ? "" : String(value)}</td>)}</tr>
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

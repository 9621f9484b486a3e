/** A fieldset of checkboxes choosing a set of keys (allowed models, a key's roles). */
export function CheckSet<K extends string | number>(
  { items, legend, onChange, selected }: {
    readonly legend: string
    readonly items: ReadonlyArray<{ readonly key: K; readonly label: string }>
    readonly selected: ReadonlySet<K>
    readonly onChange: (next: ReadonlySet<K>) => void
  }
) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {items.map((item) => (
        <label key={item.key} className="check">
          <input
            type="checkbox"
            checked={selected.has(item.key)}
            onChange={(e) => {
              const next = new Set(selected)
              if (e.target.checked) next.add(item.key)
              else next.delete(item.key)
              onChange(next)
            }}
          />
          {item.label}
        </label>
      ))}
    </fieldset>
  )
}

import type { ReactNode } from "react"

/** A fieldset of checkboxes choosing a set of keys (allowed models, a key's roles, connectors). */
export function CheckSet<K extends string | number>(
  { empty, items, legend, onChange, selected }: {
    readonly legend: string
    readonly items: ReadonlyArray<{ readonly key: K; readonly label: ReactNode }>
    readonly selected: ReadonlySet<K>
    readonly onChange: (next: ReadonlySet<K>) => void
    /** Shown when there is nothing to choose. */
    readonly empty?: string
  }
) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {items.length === 0 && empty !== undefined ? <p className="muted">{empty}</p> : null}
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

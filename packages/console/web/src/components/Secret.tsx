import { useState } from "react"

/** A secret shown this once, with a copy button. */
export function Secret({ label, value }: { readonly label: string; readonly value: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="secret" role="status">
      <p>{label}</p>
      <code data-testid="secret-value">{value}</code>
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false))
        }}
      >
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  )
}

import { useEffect, useRef, useState } from "react"

/**
 * A Vega-Lite chart, rendered in the page with vega-embed. Expressions go through vega-interpreter
 * rather than generated code, so the console runs under a CSP without `unsafe-eval`.
 */
export function Chart({ spec, title }: { readonly spec: string; readonly title: string }) {
  const element = useRef<HTMLDivElement>(null)
  const [error, setError] = useState<string>()
  useEffect(() => {
    let finalize: (() => void) | undefined
    let cancelled = false
    void (async () => {
      try {
        const [{ default: embed }, { expressionInterpreter }] = await Promise.all([
          import("vega-embed"),
          import("vega-interpreter")
        ])
        if (cancelled || element.current === null) return
        const result = await embed(element.current, JSON.parse(spec), {
          actions: false,
          ast: true,
          expr: expressionInterpreter,
          renderer: "svg"
        })
        finalize = () => result.finalize()
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e))
      }
    })()
    return () => {
      cancelled = true
      finalize?.()
    }
  }, [spec])
  return (
    <figure className="chart" aria-label={`Chart: ${title}`}>
      <div ref={element} className="chart-canvas" />
      {error === undefined ? null : <p className="error">The chart could not be drawn: {error}</p>}
    </figure>
  )
}

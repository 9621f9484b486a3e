/**
 * Vega-Lite charts, loaded on the first chart: the chart library is most of the widget's weight, so
 * a page that never shows a chart never downloads it. Expressions go through vega-interpreter rather
 * than generated code, so the widget runs under a Content-Security-Policy without `unsafe-eval`.
 */
import { h } from "./dom.js"

let loaded: Promise<readonly [typeof import("vega-embed"), typeof import("vega-interpreter")]> | undefined

/** A figure that draws the spec when the library has loaded, or says why it could not. */
export const chart = (spec: string, title: string, failed: string): HTMLElement => {
  const canvas = h("div", { class: "chart-canvas" })
  const figure = h("figure", { class: "chart", part: "chart", "aria-label": title }, canvas)
  loaded ??= Promise.all([import("vega-embed"), import("vega-interpreter")])
  loaded.then(([{ default: embed }, { expressionInterpreter }]) =>
    embed(canvas, JSON.parse(spec), {
      actions: false,
      ast: true,
      expr: expressionInterpreter,
      renderer: "svg",
      // vega-embed and its tooltips add `<style>` elements to the page, which a Content-Security-Policy
      // without `unsafe-inline` refuses: neither is used.
      defaultStyle: false,
      tooltip: false
    })
  ).catch((error: unknown) => {
    figure.append(h("p", { class: "error" }, `${failed}: ${error instanceof Error ? error.message : String(error)}`))
  })
  return figure
}

/**
 * Core's `ChartRenderer` without a browser: Vega-Lite compiled to Vega, rendered headless to SVG by
 * `vega`, then rasterized to PNG by `@resvg/resvg-js` (mail clients drop SVG).
 *
 * The specs are the server's own (`ChartSpec` inlines the data), but the renderer still refuses to
 * load anything: its loader fails every URL and file, so a spec can never make the server fetch.
 *
 * @since 0.1.0
 */
import * as ChartRenderer from "@sightline/core/ChartRenderer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Vega from "vega"
import type * as VegaLite from "vega-lite"

/**
 * Options of the renderer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The width of the PNG in pixels (charts are drawn at their own size, then scaled); default 1100. */
  readonly widthPixels?: number | undefined
}

// Loaded with the first chart, not at start: Vega, Vega-Lite and resvg's native module hold memory
// (about 10 MB of heap) that a process which renders no chart has no use for. Node keeps them loaded.
const libraries = () => Promise.all([import("vega"), import("vega-lite"), import("@resvg/resvg-js")])

const refusingLoader = (vega: typeof Vega): Vega.Loader => {
  const loader = vega.loader()
  const refuse = (uri: string) => Promise.reject(new Error(`charts load no data (${uri.slice(0, 80)})`))
  return Object.assign(loader, {
    load: refuse,
    sanitize: refuse,
    http: refuse,
    file: refuse
  })
}

// A browser sizes `"container"` charts from their element; headless there is no element, and Vega
// never settles on a size (it spins), so such charts get a fixed drawing size before compiling.
const withFixedSize = (spec: unknown): unknown => {
  if (typeof spec !== "object" || spec === null) return spec
  const sized = { ...(spec as Record<string, unknown>) }
  if (typeof sized.width !== "number") sized.width = 640
  if (typeof sized.height !== "number") sized.height = 320
  return sized
}

/**
 * Renders a Vega-Lite spec to PNG bytes.
 *
 * @since 0.1.0
 * @category utils
 */
export const renderPng = (
  spec: unknown,
  options: Options = {}
): Effect.Effect<Uint8Array, ChartRenderer.ChartRenderError> =>
  Effect.tryPromise({
    try: async () => {
      const [vega, vegaLite, { Resvg }] = await libraries()
      const compiled = vegaLite.compile(withFixedSize(spec) as VegaLite.TopLevelSpec).spec
      // Vega logs a failed load and draws an empty chart; a spec that names a URL is refused outright.
      const fetching = (compiled.data ?? []).find((data) => "url" in data)
      if (fetching !== undefined) throw new Error("charts load no data: the spec names a data URL")
      const view = new vega.View(vega.parse(compiled), { renderer: "none", loader: refusingLoader(vega) })
      try {
        const svg = await view.toSVG()
        const png = new Resvg(svg, {
          background: "white",
          fitTo: { mode: "width", value: options.widthPixels ?? 1100 },
          font: { loadSystemFonts: true }
        }).render().asPng()
        return new Uint8Array(png.buffer, png.byteOffset, png.byteLength)
      } finally {
        view.finalize()
      }
    },
    catch: (error) =>
      new ChartRenderer.ChartRenderError({
        message: `the chart could not be rendered: ${error instanceof Error ? error.message : String(error)}`
      })
  })

/**
 * The renderer as core's `ChartRenderer`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): ChartRenderer.ChartRenderer.Service =>
  ChartRenderer.ChartRenderer.of({ png: (spec) => renderPng(spec, options) })

/**
 * The renderer layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ChartRenderer.ChartRenderer> =>
  Layer.succeed(ChartRenderer.ChartRenderer, make(options))

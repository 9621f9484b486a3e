/**
 * The chart renderer port: turns a chart's Vega-Lite spec (`ChartSpec`) into a PNG, for reports
 * that travel where no script runs (e-mail clients drop SVG and never run Vega). It is optional: a
 * deployment without one delivers reports whose charts are shown by their titles.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * A spec that could not be rendered.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChartRenderError extends Schema.TaggedError<ChartRenderError>()("ChartRenderError", {
  message: Schema.String
}) {}

/**
 * Renders charts.
 *
 * @since 0.1.0
 * @category services
 */
export class ChartRenderer extends Context.Tag("@sightline/core/ChartRenderer")<
  ChartRenderer,
  ChartRenderer.Service
>() {}

export declare namespace ChartRenderer {
  /** The renderer. */
  export interface Service {
    /** The chart as PNG bytes. */
    readonly png: (spec: unknown) => Effect.Effect<Uint8Array, ChartRenderError>
  }
}

/** The smallest valid PNG header, for unit tests that only check the bytes travel. */
const pngSignature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * A renderer for unit tests: every spec becomes the PNG signature followed by the spec's title.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ChartRenderer> = Layer.succeed(
  ChartRenderer,
  ChartRenderer.of({
    png: (spec) => {
      const title = typeof spec === "object" && spec !== null && "title" in spec ? String(spec.title) : ""
      return Effect.succeed(new Uint8Array([...pngSignature, ...new TextEncoder().encode(title)]))
    }
  })
)

/**
 * `<sightline-dashboard name="…">`: one of the library's dashboards in a host's page, its tiles run
 * for the end user under their own row-level security (`POST /v2/dashboards/{name}/query`), with the
 * dashboard's filter bar: the period, and the values of each shared dimension.
 *
 * It takes `server` and `getToken` as `<sightline-chat>` does, and emits `error` and `token-expired`
 * alike. The session must name the dashboard (`dashboards` when it was minted).
 *
 * @since 0.1.0
 */
import { chart } from "./internal/chart.js"
import type { Connection } from "./internal/connection.js"
import { append, h } from "./internal/dom.js"
import { SightlineElement } from "./internal/element.js"
import type { Strings } from "./internal/strings.js"
import { table, valueCell } from "./internal/table.js"

interface Definition {
  readonly definition: {
    readonly title: string
    readonly description?: string
    readonly filters?: {
      readonly dimensions?: ReadonlyArray<{ readonly dimension: string; readonly values?: ReadonlyArray<unknown> }>
      readonly time?: { readonly start?: string; readonly end?: string }
    }
  }
}

interface Tile {
  readonly title: string
  readonly status: "ok" | "failed"
  readonly error?: string
  readonly layout: { readonly x: number; readonly y: number; readonly w: number; readonly h: number }
  readonly columns: ReadonlyArray<{ readonly name: string }>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  readonly reading?: { readonly text: string }
  readonly trusted?: { readonly name: string }
  readonly chart?: unknown
  readonly figure?: {
    readonly value: number | null
    readonly unit?: string
    readonly previous?: { readonly change?: number }
  }
}

/**
 * The dashboard element.
 *
 * @since 0.1.0
 * @category elements
 */
export class SightlineDashboard extends SightlineElement {
  static readonly observedAttributes = ["server", "name"]

  private readonly heading: HTMLElement
  private readonly filters: HTMLFormElement
  private readonly tiles: HTMLElement
  private readonly status: HTMLElement

  constructor() {
    super()
    this.heading = h("h2", { part: "title" })
    this.filters = h("form", { class: "filters", part: "filters", "aria-label": this.strings.filters })
    this.tiles = h("div", { class: "tiles", part: "tiles", "aria-live": "polite" })
    this.status = h("div", { class: "visually-hidden", role: "status" })
    append(this.root, [this.heading, this.filters, this.tiles, this.status])
    this.filters.addEventListener("submit", (event) => {
      event.preventDefault()
      void this.run()
    })
  }

  protected override ready(): boolean {
    return this.getAttribute("name") !== null
  }

  protected showError(message: string): void {
    this.tiles.replaceChildren(h("p", { class: "error", role: "alert", part: "error" }, message))
  }

  /** Reads the definition, builds the filter bar from its shared filters, then runs the tiles. */
  protected async load(connection: Connection): Promise<void> {
    const name = this.getAttribute("name")!
    const { definition } = await connection.json<Definition>(`v2/dashboards/${encodeURIComponent(name)}`)
    const strings = this.strings
    this.heading.textContent = definition.title
    const time = definition.filters?.time
    const field = (label: string, input: HTMLInputElement) => h("label", {}, label, input)
    this.filters.replaceChildren(
      field(strings.from, h("input", { type: "date", name: "start", value: time?.start })),
      field(strings.to, h("input", { type: "date", name: "end", value: time?.end })),
      ...(definition.filters?.dimensions ?? []).map((filter) =>
        field(
          filter.dimension,
          h("input", {
            type: "text",
            name: `dimension:${filter.dimension}`,
            value: (filter.values ?? []).join(", ")
          })
        )
      ),
      h("button", { type: "submit", class: "primary" }, strings.apply)
    )
    await this.run()
  }

  /** The filter values the bar holds. */
  private values() {
    const data = new FormData(this.filters)
    const dimensions: Record<string, Array<string>> = {}
    let start: string | undefined
    let end: string | undefined
    for (const [key, value] of data.entries()) {
      const text = String(value).trim()
      if (key === "start") start = text === "" ? undefined : text
      else if (key === "end") end = text === "" ? undefined : text
      else if (key.startsWith("dimension:")) {
        dimensions[key.slice("dimension:".length)] = text === "" ? [] : text.split(",").map((v) => v.trim())
      }
    }
    return {
      filters: {
        dimensions,
        ...(start === undefined && end === undefined
          ? {}
          : { time: { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) } })
      }
    }
  }

  /** Runs the tiles with the bar's values and draws them on the dashboard's grid. */
  async run(): Promise<void> {
    const connection = this.connect()
    const name = this.getAttribute("name")
    if (connection === undefined || name === null) return
    const strings = this.strings
    this.status.textContent = strings.loading
    try {
      const result = await connection.json<{ tiles: ReadonlyArray<Tile> }>(
        `v2/dashboards/${encodeURIComponent(name)}/query`,
        { method: "POST", body: JSON.stringify(this.values()) }
      )
      this.tiles.replaceChildren(...result.tiles.map((tile) => this.tile(tile, strings, this.numbers)))
      this.status.textContent = ""
    } catch (error) {
      this.fail(error)
    }
  }

  private tile(tile: Tile, strings: Strings, format: Intl.NumberFormat): HTMLElement {
    const body = tile.status === "failed"
      ? h("p", { class: "error" }, tile.error ?? strings.failed)
      : tile.figure !== undefined
      ? h(
        "p",
        { class: "figure", part: "figure" },
        tile.figure.value === null ? "–" : format.format(tile.figure.value),
        tile.figure.unit === undefined ? null : ` ${tile.figure.unit}`,
        tile.figure.previous?.change === undefined
          ? null
          : h(
            "span",
            { class: "reading" },
            ` ${tile.figure.previous.change >= 0 ? "+" : ""}${format.format(tile.figure.previous.change * 100)}%`
          )
      )
      : tile.chart !== undefined
      ? chart(JSON.stringify(tile.chart), `${strings.chart}: ${tile.title}`, strings.chartFailed)
      : table(
        `${strings.table} ${tile.title}`,
        tile.columns.map((column) => column.name),
        tile.rows.map((row) => row.map((value) => valueCell(value, format)))
      )
    const tileElement = h(
      "section",
      { class: "tile", part: "tile", "aria-label": tile.title },
      h(
        "h3",
        {},
        tile.title,
        tile.trusted === undefined ? null : h("span", { class: "badge", part: "trusted" }, strings.trusted)
      ),
      body,
      tile.reading === undefined
        ? null
        : h("p", { class: "reading", part: "reading" }, `${strings.readAs}: ${tile.reading.text}`)
    )
    // The dashboard's own grid: columns and rows as its layout places them. A constructed sheet
    // cannot hold one rule per tile, and a style attribute would need `unsafe-inline`, so the
    // placement is set through the CSSOM, which a Content-Security-Policy does not govern.
    tileElement.style.gridColumn = `${tile.layout.x + 1} / span ${tile.layout.w}`
    tileElement.style.gridRow = `${tile.layout.y + 1} / span ${tile.layout.h}`
    return tileElement
  }
}

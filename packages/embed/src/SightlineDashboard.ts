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
import { Connection, type GetToken, RequestError } from "./internal/connection.js"
import { append, h } from "./internal/dom.js"
import { numberFormat, type Strings, stringsFor } from "./internal/strings.js"
import { stylesheet } from "./internal/styles.js"

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
export class SightlineDashboard extends HTMLElement {
  static readonly observedAttributes = ["server", "name", "lang"]

  /** Resolves to a freshly minted session; called on first use and before the token ends. */
  getToken: GetToken | undefined

  private readonly root: ShadowRoot
  private connection: Connection | undefined
  private readonly heading: HTMLElement
  private readonly filters: HTMLFormElement
  private readonly tiles: HTMLElement
  private readonly status: HTMLElement

  constructor() {
    super()
    this.root = this.attachShadow({ mode: "open" })
    this.root.adoptedStyleSheets = [stylesheet()]
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

  private get strings(): Strings {
    return stringsFor(
      this.getAttribute("lang") ?? this.closest("[lang]")?.getAttribute("lang") ?? document.documentElement.lang
    )
  }

  connectedCallback(): void {
    void this.load()
  }

  attributeChangedCallback(name: string, previous: string | null, next: string | null): void {
    if (previous === null || previous === next || !this.isConnected) return
    if (name === "server") this.connection = undefined
    void this.load()
  }

  private connect(): Connection | undefined {
    const server = this.getAttribute("server")
    const getToken = this.getToken
    if (server === null || getToken === undefined) return undefined
    this.connection ??= new Connection(
      server,
      getToken,
      () => this.dispatchEvent(new CustomEvent("token-expired", { bubbles: true, composed: true }))
    )
    return this.connection
  }

  private fail(error: unknown): void {
    const status = error instanceof RequestError ? error.status : 0
    const message = error instanceof Error ? error.message : String(error)
    this.tiles.replaceChildren(h("p", { class: "error", role: "alert", part: "error" }, message))
    this.dispatchEvent(new CustomEvent("error", { detail: { message, status }, bubbles: true, composed: true }))
  }

  /** Reads the definition, builds the filter bar from its shared filters, then runs the tiles. */
  private async load(): Promise<void> {
    const connection = this.connect()
    const name = this.getAttribute("name")
    if (connection === undefined || name === null) {
      if (this.isConnected) setTimeout(() => void this.load(), 50)
      return
    }
    try {
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
    } catch (error) {
      this.fail(error)
    }
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
      const format = numberFormat(this.getAttribute("lang") ?? document.documentElement.lang)
      this.tiles.replaceChildren(...result.tiles.map((tile) => this.tile(tile, strings, format)))
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
      : h(
        "div",
        {
          class: "table-scroll",
          tabindex: "0",
          role: "region",
          "aria-label": `${strings.table} ${tile.title}`,
          part: "table"
        },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, tile.columns.map((column) => h("th", { scope: "col" }, column.name)))),
          h(
            "tbody",
            {},
            tile.rows.map((row) =>
              h(
                "tr",
                {},
                row.map((value) =>
                  typeof value === "number"
                    ? h("td", { class: "num" }, format.format(value))
                    : h("td", {}, value === null || value === undefined ? "" : String(value))
                )
              )
            )
          )
        )
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

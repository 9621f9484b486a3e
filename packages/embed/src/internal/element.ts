/**
 * What both of the widget's elements share: the host's contract (`server`, `getToken`), the open
 * shadow root with the adopted stylesheet, the page's language, one connection per server, the
 * wait for a host that sets `getToken` after adding the element, and how a failure is told (the
 * `error` event, and the element's own place to show it).
 */
import { Connection, type GetToken, RequestError } from "./connection.js"
import { numberFormat, type Strings, stringsFor } from "./strings.js"
import { stylesheet } from "./styles.js"

export abstract class SightlineElement extends HTMLElement {
  /** Resolves to a freshly minted session; called on first use and before the token ends. */
  getToken: GetToken | undefined

  protected readonly root: ShadowRoot
  private connection: Connection | undefined

  constructor() {
    super()
    // Open, so a host (and its tests) can look inside.
    this.root = this.attachShadow({ mode: "open" })
    this.root.adoptedStyleSheets = [stylesheet()]
  }

  /** The element's language: its `lang`, an ancestor's, or the page's. */
  private get language(): string {
    return this.getAttribute("lang") ?? this.closest("[lang]")?.getAttribute("lang") ?? document.documentElement.lang
  }

  protected get strings(): Strings {
    return stringsFor(this.language)
  }

  protected get numbers(): Intl.NumberFormat {
    return numberFormat(this.language)
  }

  /** Reads what the element shows, once it has a connection and `ready()` says it may. */
  protected abstract load(connection: Connection): Promise<void>

  /** Shows a failure in the element. */
  protected abstract showError(message: string): void

  /** Whether the element has what `load` needs besides a connection (a dashboard's `name`). */
  protected ready(): boolean {
    return true
  }

  /** Told when the server refused the token and the element asked `getToken()` again. */
  protected renewing(): void {}

  connectedCallback(): void {
    void this.refresh()
  }

  // An attribute present at upgrade (`previous` null) is read by the first load; a later change
  // loads again, with a new connection for a new server.
  attributeChangedCallback(name: string, previous: string | null, next: string | null): void {
    if (previous === null || previous === next || !this.isConnected) return
    if (name === "server") this.connection = undefined
    void this.refresh()
  }

  /** The connection to the server, once the host has set both `server` and `getToken`. */
  protected connect(): Connection | undefined {
    const server = this.getAttribute("server")
    const getToken = this.getToken
    if (server === null || getToken === undefined) return undefined
    this.connection ??= new Connection(server, getToken, () => {
      this.renewing()
      this.dispatchEvent(new CustomEvent("token-expired", { bubbles: true, composed: true }))
    })
    return this.connection
  }

  private async refresh(): Promise<void> {
    const connection = this.connect()
    if (connection === undefined || !this.ready()) {
      // The host may set `getToken` (or an attribute) after adding the element.
      if (this.isConnected) setTimeout(() => void this.refresh(), 50)
      return
    }
    try {
      await this.load(connection)
    } catch (error) {
      this.fail(error)
    }
  }

  protected fail(error: unknown): void {
    const status = error instanceof RequestError ? error.status : 0
    const message = error instanceof Error ? error.message : String(error)
    this.showError(message)
    this.dispatchEvent(new CustomEvent("error", { detail: { message, status }, bubbles: true, composed: true }))
  }
}

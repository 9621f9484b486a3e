/**
 * `@sightline/embed`: Sightline's chat and dashboards as custom elements for a host's own pages.
 *
 * Importing it defines `<sightline-chat>` and `<sightline-dashboard>` (once, whoever imports it
 * first). A host adds the element with `server`, and gives it `getToken`: an async function that asks
 * the host's own backend for an end user's session (`POST /v2/embed/sessions`, with the host's API key)
 * and resolves to `{token, expires_at}`. See docs/embedding.md.
 *
 * ```html
 * <sightline-chat server="https://sightline.example.com"></sightline-chat>
 * <script type="module">
 *   import "@sightline/embed"
 *   document.querySelector("sightline-chat").getToken = () =>
 *     fetch("/sightline-token", { method: "POST" }).then((r) => r.json())
 * </script>
 * ```
 *
 * @since 0.1.0
 */
import { SightlineChat } from "./SightlineChat.js"
import { SightlineDashboard } from "./SightlineDashboard.js"

export type { GetToken, MintedToken } from "./internal/connection.js"
export { SightlineChat, SightlineDashboard }

if (customElements.get("sightline-chat") === undefined) customElements.define("sightline-chat", SightlineChat)
if (customElements.get("sightline-dashboard") === undefined) {
  customElements.define("sightline-dashboard", SightlineDashboard)
}

declare global {
  interface HTMLElementTagNameMap {
    "sightline-chat": SightlineChat
    "sightline-dashboard": SightlineDashboard
  }
}

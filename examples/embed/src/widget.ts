/**
 * `pnpm --filter @sightline/example-embed widget`: the host's page with Sightline's widget, beside a
 * standalone server started with `npm start` (docs/embedding.md).
 *
 * - `SIGHTLINE_URL`: the server (default `http://127.0.0.1:8787`);
 * - `SIGHTLINE_KEY`: the host's API key (the admin key the server printed on its first start);
 * - `PORT`: the host's port (default 3001).
 *
 * The organization must list the host's origin in `embed_origins`; this says how if it does not.
 */
import * as WidgetHost from "./WidgetHost.js"

const sightlineUrl = process.env.SIGHTLINE_URL ?? "http://127.0.0.1:8787"
const apiKey = process.env.SIGHTLINE_KEY
if (apiKey === undefined || apiKey === "") {
  console.error(
    "SIGHTLINE_KEY is not set: give the host an API key of your organization (the admin key the server printed)"
  )
  process.exit(1)
}
const host = await WidgetHost.start({
  sightlineUrl,
  apiKey,
  users: { ana: { region: "EU" }, bo: { region: "NA" } },
  port: Number(process.env.PORT ?? 3001)
})
console.log(`host on ${host.url}: sign in as ana (Europe's rows) or bo (North America's).
The organization must allow the host's origin once:
  curl -X PATCH ${sightlineUrl}/v2/organization/settings -H "authorization: Bearer $SIGHTLINE_KEY" \\
    -H "content-type: application/json" -d '{"embed_origins": ["${host.url}"]}'`)
process.on("SIGTERM", () => void host.close().then(() => process.exit(0)))
process.on("SIGINT", () => void host.close().then(() => process.exit(0)))

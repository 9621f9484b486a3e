/** `pnpm --filter @sightline/example-embed start`: the host on port 3000. */
import * as Host from "./Host.js"

const host = await Host.start({ port: Number(process.env.PORT ?? 3000) })
console.log(`host on ${host.url} (its own page at /host, Sightline under /v2); admin key: ${host.adminKey}`)
process.on("SIGTERM", () => void host.close().then(() => process.exit(0)))
process.on("SIGINT", () => void host.close().then(() => process.exit(0)))

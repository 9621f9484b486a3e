/**
 * Where the console's built files are, for a server that serves them (the standalone server mounts
 * them at `/`; a host may mount them anywhere, since every asset path is relative).
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

/**
 * The directory of the built console (`index.html` and `assets/`), from either `src/` or `dist/`.
 *
 * @since 0.1.0
 * @category constants
 */
export const directory: string = NodePath.join(
  NodePath.dirname(NodeUrl.fileURLToPath(import.meta.url)),
  "..",
  "build"
)

/**
 * One built file: its path relative to `directory` (`index.html`, `assets/index-3f2a.js`) and bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Asset {
  readonly path: string
  readonly bytes: Uint8Array
}

/**
 * Every built file, read once; empty when the console was not built (`pnpm --filter
 * @sightline/console build`). Serving from memory means a request can never name a path outside it.
 * @since 0.1.0
 * @category utils
 */
export const readAll = (dir: string = directory): ReadonlyArray<Asset> => {
  if (!NodeFs.existsSync(NodePath.join(dir, "index.html"))) return []
  const files: Array<Asset> = []
  const walk = (relative: string) => {
    for (const entry of NodeFs.readdirSync(NodePath.join(dir, relative), { withFileTypes: true })) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) files.push({ path, bytes: NodeFs.readFileSync(NodePath.join(dir, path)) })
    }
  }
  walk("")
  return files
}

const contentTypes: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
  json: "application/json"
}

/**
 * What the console's pages may load: only this origin (no request ever leaves the machine), no
 * inline or generated scripts (charts run through vega-interpreter), and no framing by other sites.
 * Styles allow `unsafe-inline` because Vega sets element styles while drawing.
 *
 * @since 0.1.0
 * @category constants
 */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * A response for one console path, as plain data any server can send.
 *
 * @since 0.1.0
 * @category models
 */
export interface Served {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | string
}

/**
 * The page a server shows at `/` when the console was not built.
 *
 * @since 0.1.0
 * @category constants
 */
export const notBuiltPage = `<!doctype html><meta charset="utf-8"><title>Sightline</title>
<h1>The console is not built</h1>
<p>Run <code>pnpm install</code> (it builds the console) or <code>pnpm --filter @sightline/console build</code>,
then restart the server. The API works without it.</p>`

/**
 * Serves the console from `assets` (see `readAll`): `index.html` for `/` and every file under
 * `assets/`. Hashed assets are cached for good; the page itself is revalidated, so a new build shows
 * at once. `undefined` for any other path: it is not the console's.
 *
 * @since 0.1.0
 * @category utils
 */
export const serve = (assets: ReadonlyArray<Asset>): (path: string) => Served | undefined => {
  const byPath = new Map(assets.map((asset) => [asset.path, asset.bytes]))
  const security = {
    "content-security-policy": contentSecurityPolicy,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY"
  }
  return (path) => {
    const clean = path.split("?")[0]!.split("#")[0]!
    if (clean === "/" || clean === "/index.html") {
      const page = byPath.get("index.html")
      return {
        status: 200,
        headers: { ...security, "content-type": contentTypes.html!, "cache-control": "no-cache" },
        body: page ?? notBuiltPage
      }
    }
    if (!clean.startsWith("/assets/")) return undefined
    const bytes = byPath.get(clean.slice(1))
    if (bytes === undefined) return undefined
    const extension = clean.slice(clean.lastIndexOf(".") + 1)
    return {
      status: 200,
      headers: {
        ...security,
        "content-type": contentTypes[extension] ?? "application/octet-stream",
        "cache-control": "public, max-age=31536000, immutable"
      },
      body: bytes
    }
  }
}

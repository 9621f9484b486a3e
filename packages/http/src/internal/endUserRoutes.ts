/**
 * The routes an end user's session (`EndUser`) may use: asking and following its chats, rating
 * answers, and viewing dashboards, plus its own session's description. Every other route refuses
 * such a session with 403 before anything runs, so a route added later is closed to end users until
 * it is listed here. CORS answers these routes for any origin: the session's own origin check,
 * against what it names and the organization's `embed_origins`, is what keeps a page out.
 *
 * @internal
 */

const routes: ReadonlyArray<readonly [method: string, path: RegExp]> = [
  ["GET", /^\/v2\/chats$/],
  ["POST", /^\/v2\/chats$/],
  ["POST", /^\/v2\/chats\/stream$/],
  ["GET", /^\/v2\/chats\/[^/]+$/],
  ["GET", /^\/v2\/chats\/[^/]+\/stream$/],
  ["POST", /^\/v2\/chats\/[^/]+\/cancel$/],
  ["GET", /^\/v2\/chats\/[^/]+\/cells$/],
  ["GET", /^\/v2\/chats\/[^/]+\/cells\/[^/]+$/],
  ["PUT", /^\/v2\/chats\/[^/]+\/messages\/[^/]+\/feedback$/],
  ["GET", /^\/v2\/dashboards$/],
  ["GET", /^\/v2\/dashboards\/[^/]+$/],
  ["POST", /^\/v2\/dashboards\/[^/]+\/query$/],
  ["GET", /^\/v2\/embed\/session$/]
]

/** The path of a request's URL (`/v2/chats?limit=5` → `/v2/chats`). */
const pathOf = (url: string): string => {
  const query = url.search(/[?#]/)
  return query === -1 ? url : url.slice(0, query)
}

/** May an end user's session call `method` on `url`? */
export const allows = (method: string, url: string): boolean => {
  const path = pathOf(url)
  const upper = method.toUpperCase()
  return routes.some(([m, pattern]) => m === upper && pattern.test(path))
}

/** The message of a route an end user's session may not use. */
export const refusal = "permission denied: an end user's session can only chat, rate answers and view its dashboards"

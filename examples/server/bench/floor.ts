/**
 * The floor of `pnpm bench:http`: the smallest correct server for its two reads, written by hand
 * with `node:http` and `pg` (or PGlite), run as its own process. It answers what Sightline answers,
 * byte for byte (bodies, `RateLimit-*` headers, 401, 404 and 429), which `http.ts` checks before it
 * measures anything, and it does only the work that answer needs:
 *
 * - one prepared statement authenticates: the key by its hash, joined to its live owner and that
 *   owner's live roles (so revocation, a removed role or a deleted member count on the next request,
 *   as in Sightline);
 * - one prepared statement reads the object: the playbook with its page of reports and their count,
 *   or the caller's page of chats with their count (from the counts the chats' trigger keeps);
 * - the rate limit is a token bucket in memory, with Sightline's own rule (core's `RateLimiter.take`).
 *
 * What it leaves out is what the benchmarked caller (an admin key) never reaches: object grants
 * (a non-admin caller who does not own the playbook gets 404) and the rendering of report blocks
 * (the seeded playbook has no reports).
 *
 *   node floor.js --db pglite|postgres (--data-dir D | --url U) --prefix P [--limit N]
 */
import { PGlite } from "@electric-sql/pglite"
import * as Permission from "@sightline/core/Permission"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as PgliteClient from "@sightline/sql/PgliteClient"
import * as Option from "effect/Option"
import { createHash, randomUUID } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import { parseArgs } from "node:util"
import * as NodeV8 from "node:v8"
import pg from "pg"

const { values } = parseArgs({
  options: {
    db: { type: "string" },
    "data-dir": { type: "string" },
    url: { type: "string" },
    prefix: { type: "string" },
    limit: { type: "string", default: "1000000000" }
  }
})
// PGlite's WebAssembly on V8's baseline compiler only, as the standalone server runs it (`bin.ts`).
if (values.db === "pglite") NodeV8.setFlagsFromString("--liftoff-only")
const t = (name: string) => `"${values.prefix}${name}"`
const perMinute = Number(values.limit)
const bucketConfig: RateLimiter.BucketConfig = {
  capacity: Math.max(1, Math.floor(perMinute)),
  refillPerMinute: perMinute
}

// Timestamps as JavaScript prints them (`toISOString`), straight from PostgreSQL.
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const authText =
  `SELECT k.organization_id, k.member_id, k.expires_at > now() AS active, k.revoked_at IS NOT NULL AS revoked,
    k.inherit_all_roles, k.assumed_roles::text[] AS assumed_roles, m.email, m.deleted_at IS NOT NULL AS deleted,
    r.id AS role_id, r.name AS role_name, r.is_system, r.permissions::text[] AS permissions
  FROM ${t("api_keys")} k
  JOIN ${t("members")} m ON m.organization_id = k.organization_id AND m.id = k.member_id
  LEFT JOIN ${t("roles")} r ON r.organization_id = k.organization_id AND r.id IN (
    SELECT mr.role_id FROM ${
    t("member_roles")
  } mr WHERE mr.organization_id = k.organization_id AND mr.member_id = k.member_id
    UNION
    SELECT gr.role_id FROM ${t("group_members")} gm
      JOIN ${t("group_roles")} gr ON gr.organization_id = gm.organization_id AND gr.group_id = gm.group_id
      WHERE gm.organization_id = k.organization_id AND gm.member_id = k.member_id)
  WHERE k.secret_hash = $1`

const playbookText = `SELECT p.id, p.owner_id, p.name, p.prompt, p.status, ${iso("p.created_at")} AS created_at,
    ${iso("p.updated_at")} AS updated_at, p.connector_ids, p.cron_string, p.email_addresses, p.chat_channel_id,
    (SELECT count(*)::int FROM ${t("playbook_reports")} WHERE organization_id = $1 AND playbook_id = $2) AS total,
    (SELECT coalesce(json_agg(json_build_object('id', r.id, 'subject', r.subject, 'summary', r.summary,
        'blocks', r.blocks, 'html_preview', r.html_preview, 'chat_id', r.chat_id, 'deliveries', r.deliveries,
        'created_at', ${iso("r.created_at")})), '[]')
      FROM (SELECT * FROM ${t("playbook_reports")} WHERE organization_id = $1 AND playbook_id = $2
            ORDER BY created_at DESC, id DESC LIMIT 20) r) AS reports
  FROM ${t("playbooks")} p WHERE p.organization_id = $1 AND p.id = $2`

const chatsText = `SELECT n.total, c.id, c.summary, ${iso("c.created_at")} AS created_at, ${
  iso("c.updated_at")
} AS updated_at,
    c.source, c.model, c.status = 'running' AND c.updated_at > now() - interval '1 minute' AS is_running,
    left(coalesce(c.first_question, ''), 200) AS preview
  FROM (SELECT coalesce(sum(n), 0)::int AS total FROM ${t("chat_counts")}
        WHERE organization_id = $1 AND creator_id = $2) n
  LEFT JOIN LATERAL (SELECT * FROM ${t("chats")} WHERE organization_id = $1 AND creator_id = $2
                     ORDER BY updated_at DESC, id DESC LIMIT 20) c ON true`

type Row = Record<string, any>
type Query = (name: string, text: string, params: Array<unknown>) => Promise<Array<Row>>

const query: Query = await (async () => {
  if (values.db === "postgres") {
    const pool = new pg.Pool({ connectionString: values.url, max: 10 })
    return async (name, text, params) => (await pool.query({ name, text, values: params })).rows
  }
  const db = new PGlite(values["data-dir"]!, { postgresqlconf: [...PgliteClient.postgresqlConf] })
  await db.waitReady
  return async (_name, text, params) => (await db.query<Row>(text, params)).rows
})()

const buckets = new Map<string, RateLimiter.TokenBucket>()

const send = (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": randomUUID(),
    ...headers
  })
  response.end(body)
}
const error = (code: string, message: string) => JSON.stringify({ error: { code, message } })

const wellFormed = (key: string) => {
  const bytes = Buffer.from(key, "base64")
  return bytes.length === 32 && bytes.toString("base64") === key
}

/** The roles the key acts with (its snapshot within the live roles), as core's `Policy` reads them. */
const accessOf = (rows: ReadonlyArray<Row>) => {
  const first = rows[0]!
  const permissions = new Set<string>()
  let admin = false
  for (const row of rows) {
    if (row.role_id === null) continue
    if (!first.inherit_all_roles && !(first.assumed_roles as Array<string>).includes(row.role_id)) continue
    const isAdmin = row.is_system && row.role_name === "admin"
    admin ||= isAdmin
    const granted = isAdmin
      ? Permission.all
      : row.is_system && row.role_name === "member"
      ? Permission.memberDefaults
      : row.permissions as Array<string>
    for (const permission of granted) permissions.add(permission)
  }
  return { permissions, admin }
}

const handle = async (url: string, authorization: string | undefined, response: ServerResponse) => {
  const playbook = /^\/v2\/playbooks\/([0-9a-f-]{36})$/.exec(url)
  if (playbook === null && url !== "/v2/chats") return send(response, 404, error("not_found", "Resource not found"))
  const key = authorization?.startsWith("Bearer ") ? authorization.slice(7) : ""
  if (!wellFormed(key)) return send(response, 401, error("unauthenticated", "invalid API key format"))
  const hash = createHash("sha256").update(key).digest("hex")
  const rows = await query("floor_auth", authText, [hash])
  const first = rows[0]
  if (first === undefined || first.revoked || first.deleted) {
    return send(response, 401, error("unauthenticated", "invalid API key: API key not found"))
  }
  if (!first.active) return send(response, 401, error("unauthenticated", "invalid API key: API key expired"))

  const now = Date.now()
  const taken = RateLimiter.take(Option.fromNullable(buckets.get(first.organization_id)), now, bucketConfig, 1)
  buckets.set(first.organization_id, taken.bucket)
  const { result } = taken
  const limits: Record<string, string> = {
    "ratelimit-limit": String(result.limit),
    "ratelimit-remaining": String(result.remaining),
    "ratelimit-reset": String(Math.ceil(result.resetAfterMillis / 1000)),
    "ratelimit-policy": `${result.limit};w=60`
  }
  if (!result.allowed) {
    limits["retry-after"] = String(Math.max(1, Math.ceil(result.retryAfterMillis / 1000)))
    return send(
      response,
      429,
      error("rate_limit_exceeded", "Rate limit exceeded: too many requests for the organization"),
      limits
    )
  }
  const { admin, permissions } = accessOf(rows)

  if (playbook !== null) {
    if (!permissions.has("playbook:read")) {
      return send(response, 403, error("permission_denied", "permission denied: playbook:read required"), limits)
    }
    const [p] = await query("floor_playbook", playbookText, [first.organization_id, playbook[1]])
    if (p === undefined || (!admin && p.owner_id !== first.member_id)) {
      return send(response, 404, error("not_found", "Resource not found"), limits)
    }
    const body = {
      playbook: {
        id: p.id,
        name: p.name,
        prompt: p.prompt,
        status: p.status,
        created_at: p.created_at,
        updated_at: p.updated_at,
        connector_ids: p.connector_ids,
        ...(p.cron_string === null ? {} : { cron_string: p.cron_string }),
        ...(p.email_addresses.length === 0 ? {} : { email_addresses: p.email_addresses }),
        ...(p.chat_channel_id === null ? {} : { chat_channel_id: p.chat_channel_id })
      },
      reports: p.reports,
      total_reports_count: p.total
    }
    return send(response, 200, JSON.stringify(body), limits)
  }

  if (!permissions.has("chat:read")) {
    return send(response, 403, error("permission_denied", "permission denied: chat:read required"), limits)
  }
  const chats = await query("floor_chats", chatsText, [first.organization_id, first.member_id])
  const body = {
    chats: chats.filter((c) => c.id !== null).map((c) => ({
      id: c.id,
      summary: c.summary,
      timestamp: c.created_at,
      updated_at: c.updated_at,
      creator_email: first.email,
      preview: c.preview,
      source: c.source,
      model: c.model,
      is_running: c.is_running
    })),
    total_count: chats[0]!.total
  }
  return send(response, 200, JSON.stringify(body), limits)
}

const server = createServer((request, response) => {
  handle(request.url ?? "", request.headers.authorization, response).catch((cause) => {
    process.stderr.write(`floor: ${cause}\n`)
    send(response, 500, error("internal_error", "Internal server error"))
  })
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  process.stdout.write(`READY ${address.port}\n`)
})
process.on("SIGTERM", () => process.exit(0))

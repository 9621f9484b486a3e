/**
 * Bulk seeding of the benchmark's data straight into the store's tables (`INSERT ... SELECT ... FROM
 * generate_series(...)`): one statement per table and organization, so that 100,000 records take
 * seconds rather than the minutes the ports would need one row at a time.
 *
 * Every row is one the repositories' decoders accept (the columns are those of the migrations in
 * `src/internal/migrations`), so the measured calls read exactly what Sightline would have written.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { ApiKeySecret, SecretHash } from "@sightline/core/Secret"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../src/TablePrefix.js"

/** Members per organization (chat creators, key owners). */
export const membersPerOrganization = 20

/** Sandboxes per noise organization, which share its executions. */
export const noiseSandboxes = 10

/** Organizations besides the measured one, each seeded with the same volume. */
export const noiseOrganizations = 2

/**
 * Words of chat summaries and first questions. Chat g's summary holds word g % 100 and its first
 * question word (7g + 3) % 100, so a search for one word matches 2% of the chats, at every size.
 */
const vocabulary = [
  "revenue",
  "churn",
  "retention",
  "pipeline",
  "forecast",
  "inventory",
  "shipping",
  "refunds",
  "payroll",
  "marketing",
  "onboarding",
  "latency",
  "uptime",
  "tickets",
  "warehouse",
  "suppliers",
  "pricing",
  "discounts",
  "subscriptions",
  "renewals",
  "invoices",
  "margins",
  "headcount",
  "hiring",
  "attrition",
  "budget",
  "spend",
  "campaigns",
  "conversion",
  "funnel",
  "signups",
  "activation",
  "engagement",
  "sessions",
  "cohorts",
  "segments",
  "regions",
  "territories",
  "quotas",
  "commissions",
  "bookings",
  "backlog",
  "defects",
  "incidents",
  "outages",
  "deployments",
  "releases",
  "sprints",
  "velocity",
  "roadmap",
  "feedback",
  "surveys",
  "ratings",
  "reviews",
  "returns",
  "exchanges",
  "logistics",
  "freight",
  "customs",
  "tariffs",
  "taxes",
  "audits",
  "compliance",
  "risk",
  "fraud",
  "chargebacks",
  "disputes",
  "collections",
  "receivables",
  "payables",
  "treasury",
  "liquidity",
  "valuation",
  "dividends",
  "equity",
  "debt",
  "leases",
  "assets",
  "depreciation",
  "amortization",
  "procurement",
  "vendors",
  "contracts",
  "renovation",
  "facilities",
  "energy",
  "emissions",
  "recycling",
  "safety",
  "training",
  "benefits",
  "bonuses",
  "overtime",
  "absences",
  "scheduling",
  "staffing",
  "utilization",
  "capacity",
  "throughput",
  "yield"
] as const

/** The word the benchmark searches chats for. */
export const searchTerm = "Churn"

/** What the measurements need to know about the seeded data. */
export interface Seeded {
  readonly organizationId: string
  /** The member whose chats are listed (Chats.list lists the caller's own chats). */
  readonly callerId: string
  /** The sandbox whose executions are listed. */
  readonly sandboxId: string
  /** The secret of one of the caller's keys. */
  readonly secret: ApiKeySecret
  /** Rows per table, every organization included. */
  readonly rows: { readonly chats: number; readonly executions: number; readonly apiKeys: number }
}

const uuids = (count: number): Array<string> => Array.from({ length: count }, () => crypto.randomUUID())

/**
 * Seeds `size` chats, executions and API keys into one organization, and as many into each noise
 * organization. In the measured organization every chat is the caller's and every execution is in
 * one sandbox (the worst case for their listings); noise organizations spread theirs over their
 * members and sandboxes.
 */
export const seed = (
  prefix: TablePrefix.Service,
  size: number,
  key: { readonly secret: ApiKeySecret; readonly hash: SecretHash },
  progress: (message: string) => void
): Effect.Effect<Seeded, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = (name: string) => sql(prefix.name(name))
    // Millisecond precision, like every timestamp core writes (a cursor holds milliseconds).
    const base = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()
    const organizations = [
      { id: crypto.randomUUID(), measured: true },
      ...Array.from({ length: noiseOrganizations }, () => ({ id: crypto.randomUUID(), measured: false }))
    ]
    const measured = organizations[0]!
    let callerId = ""
    let sandboxId = ""

    for (const [index, organization] of organizations.entries()) {
      const org = organization.id
      const members = uuids(membersPerOrganization)
      const sandboxes = uuids(organization.measured ? 1 : noiseSandboxes)
      const roles = uuids(2)
      const caller = members[0]!
      // The measured organization's chats are all the caller's; noise chats are spread over members.
      const creators = organization.measured ? [caller] : members
      const started = performance.now()

      yield* sql`INSERT INTO ${table("organizations")} (id, name, created_at)
                 VALUES (${org}::uuid, ${`Organization ${index + 1}`}, ${base}::timestamptz - interval '400 days')`
      yield* sql`INSERT INTO ${table("members")} (id, organization_id, email, name, created_at)
                 SELECT (${members}::text[])[g]::uuid, ${org}::uuid,
                        'member' || g || '@org' || ${index + 1}::int || '.example.com', 'Member ' || g,
                        ${base}::timestamptz - interval '365 days' + g * interval '1 hour'
                 FROM generate_series(1, ${members.length}::int) AS g`
      yield* sql`INSERT INTO ${table("roles")} (id, organization_id, name, description, permissions, created_at,
                                                updated_at)
                 SELECT (${roles}::text[])[g]::uuid, ${org}::uuid, 'role ' || g, '',
                        ARRAY['chat:read', 'chat:write']::text[],
                        ${base}::timestamptz - interval '365 days' + g * interval '1 minute',
                        ${base}::timestamptz - interval '365 days' + g * interval '1 minute'
                 FROM generate_series(1, ${roles.length}::int) AS g`
      yield* sql`INSERT INTO ${table("member_roles")} (organization_id, member_id, role_id)
                 SELECT ${org}::uuid, ${caller}::uuid, r::uuid FROM unnest(${roles}::text[]) AS r`
      yield* sql`INSERT INTO ${table("sandboxes")} (sandbox_id, organization_id, member_id, status, started_at)
                 SELECT (${sandboxes}::text[])[g]::uuid, ${org}::uuid, ${caller}::uuid, 'running',
                        ${base}::timestamptz - interval '30 days'
                 FROM generate_series(1, ${sandboxes.length}::int) AS g`

      // Chat g was created g minutes before the base and updated within the hour after.
      yield* sql`INSERT INTO ${table("chats")} (id, organization_id, creator_id, model, summary, source, status,
                                                first_question, created_at, updated_at)
                 SELECT gen_random_uuid(), ${org}::uuid, (${creators}::text[])[1 + g % ${creators.length}::int]::uuid,
                        'gpt-4o', initcap((${vocabulary}::text[])[1 + g % 100]) || ' review #' || g,
                        (ARRAY['api', 'ui', 'playbook', 'agent'])[1 + g % 4], 'completed',
                        'How did ' || (${vocabulary}::text[])[1 + (g * 7 + 3) % 100] || ' change last quarter?',
                        ${base}::timestamptz - g * interval '1 minute',
                        ${base}::timestamptz - g * interval '1 minute' + (g % 60) * interval '1 second'
                 FROM generate_series(1, ${size}::int) AS g`
      // Execution g ran g seconds before the base; one in twenty failed.
      yield* sql`INSERT INTO ${table("executions")} (id, organization_id, sandbox_id, kind, source, input,
                                                     output_preview, error, duration_ms, created_at)
                 SELECT 'exec-' || gen_random_uuid(), ${org}::uuid,
                        (${sandboxes}::text[])[1 + g % ${sandboxes.length}::int]::uuid,
                        (ARRAY['python', 'bash', 'sql', 'query'])[1 + g % 4], 'platform_api',
                        'print(sum(range(' || g || ')))', (g::bigint * (g - 1) / 2)::text || E'\n',
                        CASE WHEN g % 20 = 0 THEN 'Traceback (most recent call last): ValueError' END,
                        g % 5000, ${base}::timestamptz - g * interval '1 second'
                 FROM generate_series(1, ${size}::int) AS g`
      // Keys of every member; one in ten revoked. The hash is 64 hex characters, like a SHA-256.
      yield* sql`INSERT INTO ${table("api_keys")} (id, organization_id, member_id, name, client_id, assumed_roles,
                                                   inherit_all_roles, full_member_access, created_at, expires_at,
                                                   revoked_at, secret_hash, created_by)
                 SELECT gen_random_uuid(), ${org}::uuid, (${members}::text[])[1 + g % ${members.length}::int]::uuid,
                        'key ' || g, 'client-' || g, '{}'::uuid[], false, false,
                        ${base}::timestamptz - g * interval '1 minute',
                        ${base}::timestamptz + interval '365 days',
                        CASE WHEN g % 10 = 0 THEN ${base}::timestamptz END,
                        md5(${org}::text || ':' || g || ':a') || md5(${org}::text || ':' || g || ':b'),
                        ${caller}::uuid
                 FROM generate_series(1, ${size}::int) AS g`

      if (organization.measured) {
        callerId = caller
        sandboxId = sandboxes[0]!
        // The key the benchmark presents: the caller's, with both roles in its snapshot.
        yield* sql`INSERT INTO ${table("api_keys")} (id, organization_id, member_id, name, client_id, assumed_roles,
                                                     inherit_all_roles, full_member_access, created_at, expires_at,
                                                     secret_hash, created_by)
                   VALUES (${crypto.randomUUID()}::uuid, ${org}::uuid, ${caller}::uuid, 'bench', 'bench',
                           ${roles}::text[]::uuid[], false, false, ${base}::timestamptz,
                           ${base}::timestamptz + interval '365 days', ${key.hash}, ${caller}::uuid)`
      }
      progress(
        `organization ${index + 1}/${organizations.length} seeded in ${
          ((performance.now() - started) / 1000).toFixed(1)
        } s`
      )
    }

    // Statistics, and the visibility map that index-only scans (the counts) rely on: what
    // autovacuum gives a table in steady state. The chat counts too: the bulk insert's trigger
    // rewrote each creator's row once per chat, and left as many dead versions of it (autovacuum
    // takes a table with that many at once; until then each `total_count` walks them).
    const started = performance.now()
    yield* sql`VACUUM ANALYZE ${table("organizations")}, ${table("members")}, ${table("roles")},
               ${table("member_roles")}, ${table("sandboxes")}, ${table("chats")}, ${table("chat_counts")},
               ${table("executions")}, ${table("api_keys")}`
    progress(`VACUUM ANALYZE in ${((performance.now() - started) / 1000).toFixed(1)} s`)

    const total = organizations.length * size
    return {
      organizationId: measured.id,
      callerId,
      sandboxId,
      secret: key.secret,
      rows: { chats: total, executions: total, apiKeys: total + 1 }
    }
  })

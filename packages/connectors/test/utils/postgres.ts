/**
 * The PostgreSQL of these tests: the server at `SIGHTLINE_TEST_DATABASE_URL` (default
 * 127.0.0.1:5432, database `test`). Unreachable, the suites are skipped visibly, except under
 * `CI=true`, where they fail.
 */
import { describe, it } from "@effect/vitest"
import pg from "pg"

export const url = process.env.SIGHTLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const probe = async (): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  client.on("error", () => undefined)
  try {
    await client.connect()
    await client.query("SELECT 1")
    return undefined
  } catch (error) {
    return String(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

const unreachable = await probe()
if (unreachable !== undefined && process.env.CI === "true") {
  throw new Error(`PostgreSQL unreachable at ${url} (CI=true, so this fails): ${unreachable}`)
}

/** Registers `suite` when PostgreSQL answers; a skipped block that says why otherwise. */
export const describePostgres = (title: string, suite: () => void): void => {
  if (unreachable === undefined) {
    describe(title, suite)
  } else {
    console.warn(`${title}: PostgreSQL unreachable at ${url}: skipped (${unreachable})`)
    describe.skip(`${title}: PostgreSQL unreachable: skipped`, () => {
      it("runs", () => undefined)
    })
  }
}

/** Runs SQL as the test database's superuser. */
export const admin = async <A>(task: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await task(client)
  } finally {
    await client.end()
  }
}

/** The connection settings of `url` for a connector, as another user. */
export const settingsFor = (user: string) => {
  const parsed = new URL(url)
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user,
    database: parsed.pathname.slice(1)
  }
}

/**
 * What an operator who runs the test databases on this machine allows: private addresses (they are
 * on loopback), and superuser roles where a suite connects as the database's own superuser.
 */
export const localAccess = { network: { allowPrivate: true, allowHosts: [] }, allowSuperuser: false } as const
export const localSuperuserAccess = { ...localAccess, allowSuperuser: true } as const

/**
 * `pnpm bench:sql`: page latency of the SQL store at 1,000 and 100,000 records, on PGlite and
 * PostgreSQL. A script, not a test: it prints a table and exits 0 unless something broke (a keyset
 * page that is not flat is a FAIL in the table, not an error).
 *
 * For each database it migrates one fresh random table prefix per size and seeds it in bulk (see
 * `seed.ts`), then times what Sightline runs through its ports, the sizes interleaved call by call:
 * `ChatRepo.list` as `Chats.list` calls it, `ExecutionRepo.list` on the first page and after a deep
 * cursor, and `Auth.authenticateApiKey`. The prefixes' tables are dropped afterwards, also on
 * failure or Ctrl-C.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Auth from "@sightline/core/Auth"
import { ChatRepo } from "@sightline/core/ChatRepo"
import * as Execution from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import { MemberId, OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Pagination from "@sightline/core/Pagination"
import * as Secret from "@sightline/core/Secret"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ExecutionRepoSql from "../src/ExecutionRepoSql.js"
import * as Migrations from "../src/Migrations.js"
import * as PgliteClient from "../src/PgliteClient.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { type Database, displayUrl, type Options, parse, usage, UsageError } from "./options.js"
import { membersPerOrganization, noiseOrganizations, noiseSandboxes, searchTerm, seed } from "./seed.js"
import { type Plan, type Row, table, timeInterleaved } from "./stats.js"

const log = (message: string) => process.stderr.write(`${message}\n`)

const count = (n: number) => n.toLocaleString("en-US")

/** Rows per keyset page of executions (the endpoint's default limit). */
const executionsLimit = 50

/** The deep page: page 200 of 50 (after row 9,950), or the last full page of a smaller listing. */
const deepPage = (size: number) => Math.min(200, Math.floor(size / executionsLimit))

/** How many of `size` chats the search matches (the seed's word pattern, see `seed.ts`). */
const searchMatches = (size: number) => {
  let matches = 0
  for (let g = 1; g <= size; g++) if (g % 100 === 1 || (g * 7 + 3) % 100 === 1) matches++
  return matches
}

const check = (condition: boolean, message: string) =>
  condition ? Effect.void : Effect.dieMessage(`benchmark data check failed: ${message}`)

/** One operation as the benchmark times it, on the data of one size. */
interface Operation {
  readonly name: string
  readonly detail: string
  /** A keyset page, which must stay flat across sizes. */
  readonly keyset: boolean
  readonly run: Effect.Effect<unknown>
}

/**
 * Migrates a fresh prefix, seeds one size into it, checks that every operation answers what the
 * seed implies, and returns the operations. The prefix's tables are dropped when the scope closes
 * (after the store's own finalizers), whether the run succeeded or not.
 */
const prepare = (
  database: Database,
  client: Context.Context<SqlClient.SqlClient>,
  size: number
): Effect.Effect<ReadonlyArray<Operation>, never, Scope.Scope> => {
  const prefix = `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}_`
  const progress = (message: string) => log(`[${database} ${count(size)}] ${message}`)
  const clientLayer = Layer.succeedContext(client)
  const store = Auth.layer.pipe(
    Layer.provideMerge(SqlStore.layer),
    Layer.provideMerge(TablePrefix.layer(prefix)),
    Layer.provideMerge(Secret.layer),
    Layer.provideMerge(clientLayer)
  )

  const program = Effect.gen(function*() {
    const hasher = yield* Secret.SecretHasher
    const secret = yield* hasher.generate
    const tables = yield* TablePrefix.TablePrefix
    const seeded = yield* seed(tables, size, { secret, hash: yield* hasher.hash(secret) }, progress)
    const sql = yield* SqlClient.SqlClient
    const chats = yield* ChatRepo
    const executions = yield* ExecutionRepo
    const auth = yield* Auth.Auth
    const organizationId = OrganizationId.make(seeded.organizationId)
    const callerId = MemberId.make(seeded.callerId)
    const sandboxId = SandboxId.make(seeded.sandboxId)

    // List chats as `Chats.list` does (the caller's own chats, `GET /v2/chats` defaults): a page
    // by offset plus the total count.
    const listChats = (term: string | undefined) =>
      chats.list(organizationId, {
        limit: 20,
        offset: 0,
        sortBy: "updated_at",
        sortDirection: "desc",
        creatorId: callerId,
        searchTerm: term
      })
    const all = yield* listChats(undefined)
    yield* check(all.rows.length === Math.min(20, size) && all.totalCount === size, "list chats")
    const found = yield* listChats(searchTerm)
    const matches = searchMatches(size)
    yield* check(found.totalCount === matches && found.rows.length === Math.min(20, matches), "search chats")

    // The first page of the sandbox's executions, and a deep page after a cursor computed from the
    // row at that depth, cross-checked against the cursor reached by walking the pages.
    const firstPage = executions.list(organizationId, sandboxId, { limit: executionsLimit })
    const first = yield* firstPage
    yield* check(first.items.length === Math.min(executionsLimit, size), "first page of executions")
    const page = deepPage(size)
    let cursor: string | undefined
    if (page >= 2) {
      const depth = (page - 1) * executionsLimit
      const [row] = yield* sql`
        SELECT id, organization_id, sandbox_id, kind, source, input, output_preview, error, duration_ms, created_at
        FROM ${sql(tables.name("executions"))}
        WHERE organization_id = ${organizationId} AND sandbox_id = ${sandboxId}
        ORDER BY created_at DESC, id DESC OFFSET ${depth - 1} LIMIT 1`
      const execution = yield* Schema.decodeUnknown(ExecutionRepoSql.ExecutionFromRow)(row)
      cursor = Pagination.encodeCursor(Execution.keyset(execution))
      let walked = first
      for (let p = 2; p < page; p++) {
        const after = yield* Pagination.decodeCursor(walked.nextCursor!)
        walked = yield* executions.list(organizationId, sandboxId, { limit: executionsLimit, after })
      }
      yield* check(walked.nextCursor === cursor, `the cursor after walking ${page - 1} pages`)
    }
    // What `GET .../executions?cursor=` does with the cursor: decode it, then read the page.
    const deep = (after: string) =>
      Effect.flatMap(
        Pagination.decodeCursor(after),
        (keyset) => executions.list(organizationId, sandboxId, { limit: executionsLimit, after: keyset })
      )
    if (cursor !== undefined) {
      const result = yield* deep(cursor)
      yield* check(result.items.length === executionsLimit, "deep page of executions")
    }

    const principal = yield* auth.authenticateApiKey(secret)
    yield* check(principal.memberId === callerId && principal.roles.length === 2, "API key principal")

    const operations: Array<Operation> = [
      {
        name: "list chats",
        detail: `caller's ${count(size)}, updated_at desc, limit 20 + count`,
        keyset: false,
        run: listChats(undefined)
      },
      {
        name: "list chats, search_term",
        detail: `"${searchTerm}": ${count(matches)} matches, limit 20 + count`,
        keyset: false,
        run: listChats(searchTerm)
      },
      {
        name: "list executions, first page",
        detail: `one sandbox of ${count(size)}, limit ${executionsLimit}`,
        keyset: true,
        run: firstPage
      }
    ]
    if (cursor !== undefined) {
      operations.push({
        name: "list executions, deep cursor",
        detail: `page ${page} (after row ${count((page - 1) * executionsLimit)})`,
        keyset: true,
        run: Effect.orDie(deep(cursor))
      })
    }
    operations.push({
      name: "verify API key",
      detail: `Auth.authenticateApiKey, ${count(seeded.rows.apiKeys)} keys`,
      keyset: false,
      run: Effect.orDie(auth.authenticateApiKey(secret))
    })
    progress("seeded and checked")
    return operations
  })

  return Effect.gen(function*() {
    yield* Effect.addFinalizer(() =>
      // Ours alone: the prefix is random.
      Migrations.drop.pipe(
        Effect.tap(() => progress(`dropped the tables of ${prefix}`)),
        Effect.provide([clientLayer, TablePrefix.layer(prefix)]),
        Effect.catchAllCause((cause) =>
          Effect.sync(() => progress(`could not drop the tables of ${prefix}: ${Cause.pretty(cause)}`))
        )
      )
    )
    progress(`prefix ${prefix}: migrating, then seeding ${count(size)} chats, executions and API keys per organization`)
    const context = yield* Layer.build(store)
    return yield* Effect.provide(program, context)
  }).pipe(Effect.orDie)
}

/**
 * Prepares every size on one database, then times each operation with the sizes interleaved call by
 * call, so that a change of load on the machine weighs on every size alike.
 */
const runDatabase = (
  database: Database,
  client: Context.Context<SqlClient.SqlClient>,
  sizes: ReadonlyArray<number>,
  plan: Plan
): Effect.Effect<ReadonlyArray<Row>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const prepared: Array<{ readonly size: number; readonly operations: ReadonlyArray<Operation> }> = []
    for (const size of sizes) prepared.push({ size, operations: yield* prepare(database, client, size) })
    const names = [...new Set(prepared.flatMap(({ operations }) => operations.map((operation) => operation.name)))]
    const rows: Array<Row> = []
    for (const name of names) {
      const subjects = prepared.flatMap(({ operations, size }) =>
        operations.filter((operation) => operation.name === name).map((operation) => ({ size, operation }))
      )
      const timings = yield* timeInterleaved(subjects.map(({ operation }) => operation.run), plan)
      subjects.forEach(({ operation, size }, i) => {
        const timing = timings[i]!
        log(
          `[${database} ${count(size)}] ${name}: median ${timing.median.toFixed(2)} ms, ` +
            `p99 ${timing.p99.toFixed(2)} ms (n=${timing.samples})`
        )
        rows.push({ database, size, operation: name, detail: operation.detail, keyset: operation.keyset, timing })
      })
    }
    // In the table, sizes of one database follow each other.
    return rows.sort((a, b) => a.size - b.size)
  })

/** The client of a database, or why PostgreSQL is skipped. */
const openClient = (database: Database, options: Options) =>
  database === "pglite"
    ? Effect.map(Layer.build(PgliteClient.layerMemory), (context) => context as Context.Context<SqlClient.SqlClient>)
    : Layer.build(PostgresClient.layer({ url: options.postgresUrl, connectTimeout: Duration.seconds(3) })).pipe(
      Effect.tap((context) => Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`), context)),
      Effect.map((context) => context as Context.Context<SqlClient.SqlClient>),
      Effect.timeoutFail({
        duration: Duration.seconds(10),
        onTimeout: () => new Error("no answer within 10 s")
      })
    )

const main = (options: Options) =>
  Effect.gen(function*() {
    const plan: Plan = {
      warmup: Math.max(5, Math.min(20, Math.ceil(options.iterations / 10))),
      iterations: options.iterations,
      budgetMs: 30_000,
      minIterations: Math.min(options.iterations, 30)
    }
    const started = performance.now()
    const rows: Array<Row> = []
    const notes: Array<string> = []
    for (const database of options.databases) {
      // One client per database, closed before the next one opens.
      yield* Effect.scoped(Effect.gen(function*() {
        const opened = yield* Effect.either(openClient(database, options))
        if (opened._tag === "Left") {
          if (database === "pglite") return yield* Effect.die(opened.left)
          const error = opened.left as { readonly cause?: unknown; readonly message?: unknown }
          const reason = String(error.cause ?? error.message ?? error)
          const note = `postgres: skipped, PostgreSQL unreachable at ${displayUrl(options.postgresUrl)} (${reason})`
          log(note)
          notes.push(note)
          return
        }
        rows.push(...yield* runDatabase(database, opened.right, options.sizes, plan))
      }))
    }
    const elapsed = (performance.now() - started) / 1000
    const lines = [
      "",
      `Sightline SQL store, page latency through the ports (${
        count(1 + noiseOrganizations)
      } organizations: the measured ` +
      `one and ${noiseOrganizations} of noise with the same volume; ${membersPerOrganization} members and ` +
      `${noiseSandboxes} sandboxes per noise organization; per operation ${plan.warmup} warm-up calls, then up to ` +
      `${plan.iterations} timed calls per size, the sizes interleaved, within 30 s unless fewer than ` +
      `${plan.minIterations})`,
      "",
      rows.length === 0 ? "Nothing was measured." : table(rows),
      "",
      ...notes,
      `Finished in ${elapsed.toFixed(0)} s.`
    ]
    process.stdout.write(`${lines.join("\n")}\n`)
  })

let options: Options | "help"
try {
  options = parse(process.argv.slice(2), process.env)
} catch (error) {
  if (!(error instanceof UsageError)) throw error
  process.stderr.write(`${error.message}\n\n${usage}\n`)
  process.exit(2)
}
if (options === "help") {
  process.stdout.write(`${usage}\n`)
} else {
  const fiber = Effect.runFork(main(options))
  // Ctrl-C interrupts the run, which still drops the prefix's tables before exiting.
  process.once("SIGINT", () => {
    log("interrupted: cleaning up")
    Effect.runFork(Fiber.interrupt(fiber))
  })
  fiber.addObserver((exit) => {
    if (Exit.isFailure(exit)) {
      if (!Exit.isInterrupted(exit)) log(Cause.pretty(exit.cause))
      process.exitCode = Exit.isInterrupted(exit) ? 130 : 1
    }
  })
}

/**
 * The ops CLI of the standalone server:
 *
 *   sightline serve                                   serve the API (bootstraps an empty store)
 *   sightline migrate                                 run the migrations and exit
 *   sightline org create --name N --admin-email E [--json]
 *                                                     a new organization, its admin and an admin key
 *   sightline eval run --set PATH --connector ID [--model M] [--commit C] [--url URL] [--json]
 *                                                     runs an evaluation set on a running server (the
 *                                                     key in SVC_API_KEY), prints its cases, and exits 1
 *                                                     on a regression or a run that did not complete
 *   sightline mcp [--url URL]                         the MCP server over stdio, for local agents: relays
 *                                                     to a running server's /mcp with the key in SVC_API_KEY
 *   sightline semantic import PATH --from dbt|cube|lookml|osi --connector NAME [--schema S] [--name N] [--out DIR] [--json]
 *                                                     reads a project (a directory, a zip or a file),
 *                                                     writes DIR/semantic/<name>.yaml and prints the report
 *   sightline semantic export MODEL --to osi [--out FILE]
 *                                                     a semantic model file as an Apache Ossie (OSI) document
 *
 * Exit codes: 0 success, 1 failure (a message on stderr, never a stack trace), 2 usage.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as ConnectorsRuntime from "@sightline/connectors/Runtime"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import * as Connector from "@sightline/core/Connector"
import * as Connectors from "@sightline/core/Connectors"
import * as Organizations from "@sightline/core/Organizations"
import * as SandboxRunners from "@sightline/core/SandboxRunners"
import * as SemanticImport from "@sightline/core/SemanticImport"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Sessions from "@sightline/core/Sessions"
import * as PublicUrl from "@sightline/http/PublicUrl"
import * as SemanticImportForm from "@sightline/http/SemanticImportForm"
import * as Server from "@sightline/http/Server"
import * as PgliteClient from "@sightline/sql/PgliteClient"
import * as SqlStore from "@sightline/sql/SqlStore"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import { createServer } from "node:http"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"
import * as Config from "./Config.js"
import * as McpStdio from "./McpStdio.js"
import * as Sightline from "./Sightline.js"

/** A command line that is not one of ours (exit code 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** A failure to report to the operator in one line (exit code 1). */
export class CliError extends Data.TaggedError("CliError")<{ readonly message: string }> {}

export const usage = `usage:
  sightline serve
  sightline migrate
  sightline org create --name <name> --admin-email <email> [--json]
  sightline eval run --set <path> --connector <id> [--model <id>] [--commit <sha>] [--url <base>] [--json]
  sightline mcp [--url <base>]
  sightline semantic import <path> --from dbt|cube|lookml|osi --connector <name> [--schema <schema>] [--name <name>] [--out <dir>] [--json]
  sightline semantic export <model.yaml> --to osi [--out <file>]`

/** The organization `serve` creates on an empty store. */
export const defaultOrganization = { name: "Default", adminEmail: "admin@sightline.local" } as const

/**
 * Creates an organization with its admin member, an admin API key, and a one-time link with which
 * the admin sets a password and signs in to the console (`base` is the server's public URL).
 */
export const createOrganization = (input: { readonly name: string; readonly adminEmail: string }, base: string) =>
  Effect.gen(function*() {
    const { admin, organization } = yield* (yield* Organizations.Organizations).create(input)
    const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "admin")
    const link = yield* (yield* Sessions.Sessions).linkFor(organization.id, admin.id, "invite")
    return {
      organization_id: organization.id,
      member_id: admin.id,
      api_key: key,
      sign_in_url: PublicUrl.signInLink(base, link.token)
    }
  })

/** The DEMO connector `serve` adds to the organization it creates: everyone there may use it. */
export const demoConnector = Schema.decodeUnknownSync(Connector.CreateConnectorRequest)({
  config: { connector_type: "DEMO", name: "Demo retail", demo: {} },
  access: { is_public: true, grants: [] }
})

/**
 * On an empty store, a default organization with the DEMO connector, so a newcomer can ask a question
 * at once; its admin key and sign-in link are printed this once.
 */
const bootstrap = (base: string) =>
  Effect.gen(function*() {
    const existing = yield* (yield* Organizations.Organizations).list()
    if (existing.length > 0) return
    const created = yield* createOrganization(defaultOrganization, base)
    const admin = yield* (yield* Auth.Auth).sessionPrincipal(created.organization_id, created.member_id)
    yield* (yield* Connectors.Connectors).create(admin, demoConnector)
    yield* Console.log(
      [
        `Created the organization "${defaultOrganization.name}" with the admin ${defaultOrganization.adminEmail}` +
        ` and the DEMO connector (id 1).`,
        `Admin API key (shown once, keep it): ${created.api_key}`,
        `Open the console and set the admin's password (one-time link, valid 7 days): ${created.sign_in_url}`
      ].join("\n")
    )
  })

/** How long shutdown waits for in-flight requests before closing their connections. */
export const drainTimeoutMillis = 10_000

/**
 * A Node server whose shutdown drains: it stops accepting, closes idle keep-alive connections, and
 * waits (up to `drainTimeoutMillis`) until every request in flight has been answered, before the
 * request handler is detached and the store closes. Without it a request that arrived just before
 * SIGTERM could be left unanswered on an open connection.
 */
export const drainingNodeServer = (listen: Config.Listen) =>
  Effect.gen(function*() {
    const server = Sightline.answerClientErrors(createServer())
    let inFlight = 0
    server.on("request", (_request, response) => {
      // The socket listens before the app is built and its handler attached; a request that came
      // in between (a health check while starting) would otherwise never get an answer.
      if (server.listenerCount("request") === 1) {
        const body = JSON.stringify({
          error: { code: "unavailable", message: "The server is starting: retry shortly" }
        })
        response.writeHead(503, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "retry-after": "1"
        })
        response.end(body)
        return
      }
      inFlight++
      response.on("close", () => inFlight--)
    })
    const drain = Effect.async<void>((resume) => {
      server.close()
      const started = Date.now()
      const poll = setInterval(() => {
        server.closeIdleConnections()
        if (inFlight === 0 || Date.now() - started > drainTimeoutMillis) {
          clearInterval(poll)
          server.closeAllConnections()
          resume(Effect.void)
        }
      }, 10)
    })
    return { server, drain }
  }).pipe(Effect.map(({ drain, server }) => ({
    http: NodeHttpServer.layer(() => server, { host: listen.host, port: listen.port }),
    drain
  })))

const serve = Effect.gen(function*() {
  const options = yield* Config.options
  const listen = yield* Config.listen
  const node = yield* drainingNodeServer(listen)
  // Built after the server, so released before it: the drain runs while the handler still answers.
  // A sandbox runner first stops taking new sandboxes, so that none is placed on it while it drains.
  const server = Layer.scopedDiscard(Effect.flatMap(
    Effect.serviceOption(SandboxRunners.SandboxRunners),
    (runners) =>
      Effect.addFinalizer(() =>
        Effect.zipRight(Option.match(runners, { onNone: () => Effect.void, onSome: (r) => r.drain }), node.drain)
      )
  )).pipe(
    // Links always have a base the operator chose or the documented default, never a request's Host.
    Layer.provideMerge(Server.serve(Sightline.app({ ...options, publicUrl: Config.publicBase(options, listen) }))),
    Layer.provide(node.http)
  )
  // One store for both steps: bootstrap on it, then serve until interrupted (SIGINT/SIGTERM); the
  // store closes last.
  return yield* Effect.zipRight(bootstrap(Config.publicBase(options, listen)), Layer.launch(server)).pipe(
    Effect.provide(Sightline.core(options)),
    Effect.provide(Sightline.observability(options))
  )
})

const migrate = Effect.gen(function*() {
  const options = yield* Config.options
  // Building the store runs the migrations under an advisory lock.
  yield* Layer.build(Sightline.core(options)).pipe(Effect.scoped)
  yield* Console.log("migrations are up to date")
})

const orgCreate = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...args],
          options: { name: { type: "string" }, "admin-email": { type: "string" }, json: { type: "boolean" } },
          strict: true
        }),
      catch: (error) => new UsageError({ message: (error as Error).message })
    })
    const name = parsed.values.name
    const adminEmail = parsed.values["admin-email"]
    if (name === undefined || adminEmail === undefined) {
      return yield* new UsageError({ message: "org create needs --name and --admin-email" })
    }
    const options = yield* Config.options
    const base = Config.publicBase(options, yield* Config.listen)
    const created = yield* createOrganization({ name, adminEmail }, base).pipe(
      Effect.catchTag("InvalidRequest", (error) => new CliError({ message: error.message })),
      Effect.provide(Sightline.core(options))
    )
    yield* parsed.values.json === true
      ? Console.log(JSON.stringify(created))
      : Console.log(
        [
          `organization ${created.organization_id} created`,
          `admin member ${created.member_id} (${adminEmail})`,
          `admin API key (shown once, keep it): ${created.api_key}`,
          `admin sign-in link (one-time, valid 7 days): ${created.sign_in_url}`
        ].join("\n")
      )
  })

/** How often `eval run` looks at its run. */
const evalPollMillis = 500

/**
 * `sightline eval run`: starts a run of an evaluation set on a running server (`--url`, else
 * `SIGHTLINE_URL`, else this machine's server) with the key in `SVC_API_KEY`, waits for it, and
 * prints each case and the accuracy (`--json`: the run as the API gives it). A host's CI runs it:
 * the exit code is 1 when the run did not complete or has regressions against the run before.
 */
const evalRun = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...args],
          options: {
            set: { type: "string" },
            connector: { type: "string" },
            model: { type: "string" },
            commit: { type: "string" },
            url: { type: "string" },
            json: { type: "boolean" }
          },
          strict: true
        }),
      catch: (error) => new UsageError({ message: (error as Error).message })
    })
    const { commit, connector, model, set } = parsed.values
    if (set === undefined || connector === undefined || !/^\d+$/.test(connector)) {
      return yield* new UsageError({ message: "eval run needs --set <path> and --connector <id>" })
    }
    const key = process.env["SVC_API_KEY"]
    if (key === undefined || key === "") {
      return yield* new CliError({ message: "eval run needs an API key in SVC_API_KEY" })
    }
    const base = (parsed.values.url ?? process.env["SIGHTLINE_URL"] ??
      `http://localhost:${(yield* Config.listen).port}`).replace(/\/+$/, "")
    const call = (path: string, init: RequestInit = {}) =>
      Effect.tryPromise({
        try: async () => {
          const response = await fetch(`${base}${path}`, {
            ...init,
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }
          })
          return { status: response.status, body: await response.json() as any }
        },
        catch: (error) => new CliError({ message: `could not reach ${base}: ${(error as Error).message}` })
      }).pipe(Effect.flatMap((answer) =>
        answer.status >= 400
          ? Effect.fail(new CliError({ message: answer.body?.error?.message ?? `HTTP ${answer.status}` }))
          : Effect.succeed(answer.body)
      ))
    const started = yield* call("/v2/evals/runs", {
      method: "POST",
      body: JSON.stringify({
        set,
        connector_id: Number(connector),
        ...(model === undefined ? {} : { model }),
        ...(commit === undefined ? {} : { commit })
      })
    })
    let run = started
    while (!["completed", "failed", "cancelled"].includes(run.status)) {
      yield* Effect.sleep(evalPollMillis)
      run = yield* call(`/v2/evals/runs/${started.id}`)
    }
    const regressions: ReadonlyArray<string> = run.regressions ?? []
    if (parsed.values.json === true) {
      yield* Console.log(JSON.stringify(run))
    } else {
      const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")
      yield* Console.log(
        [
          `evaluation run ${run.id}: ${set} with ${run.model} on connector ${connector}`,
          "",
          "| # | result | question | difference |",
          "|---:|---|---|---|",
          ...run.results.map((r: any, i: number) =>
            `| ${i + 1} | ${r.passed ? "pass" : regressions.includes(r.question) ? "REGRESSION" : "fail"} | ${
              cell(r.question)
            } | ${cell(r.difference ?? r.error ?? "")} |`
          ),
          "",
          run.status === "completed"
            ? `accuracy ${(100 * run.accuracy).toFixed(1)}%: ${run.passed} passed, ${run.failed} failed` +
              (run.compared_with === undefined
                ? ""
                : `, ${regressions.length} regressions against ${run.compared_with}`)
            : `the run ${run.status}${run.error === undefined ? "" : `: ${run.error}`}`
        ].join("\n")
      )
    }
    if (run.status !== "completed") return yield* new CliError({ message: `the evaluation run ${run.status}` })
    if (regressions.length > 0) {
      return yield* new CliError({ message: `${regressions.length} regressions: ${regressions.join("; ")}` })
    }
  })

/**
 * `sightline pglite-template <file>`: a freshly migrated PGlite cluster as a gzipped tarball, which
 * new data directories then start from (`pnpm start` makes it; see `Config.pgliteTemplate`).
 */
const pgliteTemplate = (file: string) =>
  PgliteClient.dumpTemplate(file).pipe(
    Effect.provide(SqlStore.layer.pipe(Layer.provideMerge(Layer.merge(PgliteClient.layerMemory, TablePrefix.layer())))),
    Effect.zipRight(Console.log(`wrote ${file}`))
  )

/**
 * `sightline demo-cache <directory>`: builds the DEMO connector's database into the directory unless
 * it is there already (`pnpm start` runs it; see `Config.builtDemoCache`).
 */
const demoCache = (directory: string) =>
  ConnectorsRuntime.buildDemoCache(directory).pipe(Effect.zipRight(Console.log(`the DEMO database is in ${directory}`)))

/**
 * `sightline mcp`: the MCP server over stdio, relayed to a running server (`--url`, else
 * `SIGHTLINE_URL`, else this machine's server) with the key in `SVC_API_KEY`.
 */
const mcp = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({
      try: () => parseArgs({ args: [...args], options: { url: { type: "string" } }, strict: true }),
      catch: (error) => new UsageError({ message: (error as Error).message })
    })
    const key = process.env["SVC_API_KEY"]
    if (key === undefined || key === "") return yield* new CliError({ message: "mcp needs an API key in SVC_API_KEY" })
    const base = (parsed.values.url ?? process.env["SIGHTLINE_URL"] ??
      `http://localhost:${(yield* Config.listen).port}`).replace(/\/+$/, "")
    yield* Effect.tryPromise({
      try: () => McpStdio.relay(`${base}/mcp`, key),
      catch: (error) => new CliError({ message: `mcp: ${(error as Error).message}` })
    })
  })

/**
 * `sightline semantic import`: a dbt, Cube, LookML or OSI project read into a semantic model, offline. The model is
 * written where the library keeps it (`<out>/semantic/<name>.yaml`, the report as its first
 * comment) and the report printed; file it into the library as any change, or send the project to
 * `POST /v2/semantic/import` with `file_change`.
 */
const semanticImport = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...args],
          options: {
            from: { type: "string" },
            connector: { type: "string" },
            schema: { type: "string" },
            name: { type: "string" },
            out: { type: "string" },
            json: { type: "boolean" }
          },
          allowPositionals: true,
          strict: true
        }),
      catch: (error) => new UsageError({ message: (error as Error).message })
    })
    const [source] = parsed.positionals
    const { connector, from, name, out, schema } = parsed.values
    if (source === undefined || parsed.positionals.length > 1 || from === undefined || connector === undefined) {
      return yield* new UsageError({ message: "semantic import needs <path>, --from and --connector" })
    }
    if (!Schema.is(SemanticImport.Format)(from)) {
      return yield* new UsageError({
        message: `--from ${from}: the formats are ${SemanticImport.Format.literals.join(", ")}`
      })
    }
    const uploads = yield* Effect.try({
      try: () => {
        if (!fs.statSync(source).isDirectory()) {
          return [{ name: NodePath.basename(source), bytes: fs.readFileSync(source) }]
        }
        // A project's own files: not its installed packages, its build output or its history.
        const walk = (at: string): Array<string> =>
          fs.readdirSync(at, { withFileTypes: true }).flatMap((entry) =>
            entry.isDirectory()
              ? ["node_modules", "target", "dbt_packages", ".git"].includes(entry.name)
                ? []
                : walk(NodePath.join(at, entry.name))
              : [NodePath.join(at, entry.name)]
          )
        return walk(source)
          .map((path) => ({
            name: NodePath.relative(source, path).split(NodePath.sep).join("/"),
            bytes: fs.readFileSync(path)
          }))
          .filter((upload) => SemanticImportForm.readable.test(upload.name))
      },
      catch: (error) => new CliError({ message: `semantic import: ${(error as Error).message}` })
    })
    const files = yield* Either.mapLeft(
      SemanticImportForm.sourcesOf(uploads),
      (message) => new CliError({ message: `semantic import: ${message}` })
    )
    const imported = yield* Either.mapLeft(
      SemanticImport.importFiles(from, files.map((f) => ({ path: f.path, text: f.content })), {
        connector,
        schema,
        name
      }),
      (error) =>
        new CliError({ message: `${error.file}${error.line === undefined ? "" : `:${error.line}`}: ${error.message}` })
    )
    const target = NodePath.join(out ?? ".", SemanticImport.pathOf(imported))
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(NodePath.dirname(target), { recursive: true })
        fs.writeFileSync(target, SemanticImport.fileText(from, imported))
      },
      catch: (error) => new CliError({ message: `semantic import: ${(error as Error).message}` })
    })
    const tally = SemanticImport.tally(imported.report)
    yield* parsed.values.json === true
      ? Console.log(JSON.stringify({ path: target, report: imported.report, tally }))
      : Console.log(
        `${
          SemanticImport.formatReport(imported.report)
        }\n\nwrote ${target}: ${tally.imported} imported, ${tally.approximated} approximated, ${tally.refused} refused`
      )
  })

/**
 * `sightline semantic export`: a semantic model file (a library's `semantic/<name>.yaml`) as an
 * Apache Ossie (OSI) document, on stdout or in `--out`; the server's is `GET
 * /v2/connectors/{id}/semantic-model?format=osi`.
 */
const semanticExport = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...args],
          options: { to: { type: "string" }, out: { type: "string" } },
          allowPositionals: true,
          strict: true
        }),
      catch: (error) => new UsageError({ message: (error as Error).message })
    })
    const [source] = parsed.positionals
    if (source === undefined || parsed.positionals.length > 1 || parsed.values.to !== "osi") {
      return yield* new UsageError({ message: "semantic export needs <model.yaml> and --to osi" })
    }
    const text = yield* Effect.try({
      try: () => fs.readFileSync(source, "utf8"),
      catch: (error) => new CliError({ message: `semantic export: ${(error as Error).message}` })
    })
    const model = yield* Either.mapLeft(
      SemanticModel.parse(source, text),
      (problems) => new CliError({ message: problems.map(SemanticModel.formatProblem).join("; ") })
    )
    const document = SemanticImport.toOsi(model.file)
    if (parsed.values.out === undefined) return yield* Console.log(document.trimEnd())
    yield* Effect.try({
      try: () => fs.writeFileSync(parsed.values.out!, document),
      catch: (error) => new CliError({ message: `semantic export: ${(error as Error).message}` })
    })
    yield* Console.log(`wrote ${parsed.values.out}: OSI ${SemanticImport.osiVersion}`)
  })

/** Runs the command line `argv` (without the node and script paths). */
export const run = (argv: ReadonlyArray<string>) => {
  const [command, ...rest] = argv
  if (command === "serve" && rest.length === 0) return serve
  if (command === "migrate" && rest.length === 0) return migrate
  if (command === "pglite-template" && rest.length === 1) return pgliteTemplate(rest[0]!)
  if (command === "demo-cache" && rest.length === 1) return demoCache(rest[0]!)
  if (command === "org" && rest[0] === "create") return orgCreate(rest.slice(1))
  if (command === "eval" && rest[0] === "run") return evalRun(rest.slice(1))
  if (command === "mcp") return mcp(rest)
  if (command === "semantic" && rest[0] === "import") return semanticImport(rest.slice(1))
  if (command === "semantic" && rest[0] === "export") return semanticExport(rest.slice(1))
  return Effect.fail(
    new UsageError({ message: command === undefined ? "missing command" : `unknown command: ${argv.join(" ")}` })
  )
}

/** Logs as JSON lines on stderr (stdout carries only what commands print, such as `--json` output). */
export const logger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.jsonLogger))

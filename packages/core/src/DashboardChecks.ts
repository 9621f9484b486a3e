/**
 * The checks of a change that touches dashboards: each touched dashboard reads (YAML, the format,
 * the grid), its connector is one the person filing or approving may use, and every tile compiles
 * against the model that governs the connector in the change's library and plans on the
 * connector. A failed check keeps the change from merging.
 *
 * As for semantic models, nobody has reviewed the change yet, so a tile is planned (`EXPLAIN`),
 * never run, under the client attributes of whoever files or approves, and a failure keeps only the
 * database's words that cannot hold a row's value.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as ChangeCheck from "./ChangeCheck.js"
import type * as ChangeChecks from "./ChangeChecks.js"
import type * as Connector from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboard from "./Dashboard.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import * as SqlStatement from "./internal/sqlStatement.js"
import * as Policy from "./Policy.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as SemanticModel from "./SemanticModel.js"

/** How long one tile may plan. */
const planTimeoutMillis = 10_000

/**
 * The checker of dashboards, over the connectors and their runtime in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const checker: Effect.Effect<
  ChangeChecks.Checker,
  never,
  ConnectorRepo | ConnectorRuntime.ConnectorRuntime
> = Effect.gen(function*() {
  const repo = yield* ConnectorRepo
  const runtime = yield* ConnectorRuntime.ConnectorRuntime

  /** The statement a tile plans, or why it has none. */
  const statementOf = (
    file: Dashboard.DashboardFile,
    tile: Dashboard.Tile,
    model: SemanticModel.SemanticModel,
    connector: Connector.ConnectorRecord,
    principal: Policy.Principal
  ): Either.Either<{ readonly sql: string; readonly params: ReadonlyArray<SemanticCompiler.Param> }, string> => {
    const dialect = SemanticLayer.dialectOf(connector)
    const query = tile.query
    if ("sql" in query) {
      // SQL in a dashboard is written SQL: it runs only where its viewer may run SQL, and is one
      // query, as a verified query must be, before it is wrapped in a plan.
      const refusal = ConnectorUse.rawSqlRefusal(principal, connector) ?? SqlStatement.notOneQuery(query.sql)
      return refusal === undefined ? Either.right({ sql: query.sql, params: [] }) : Either.left(refusal)
    }
    if ("verified" in query) {
      const verified = model.verifiedQueries.find((q) => q.name === query.verified)
      return verified === undefined
        ? Either.left(`the model has no verified query ${query.verified}`)
        : Either.mapLeft(SemanticCompiler.verifiedSql(model, verified, query.params ?? {}, dialect), (e) => e.message)
    }
    return Either.mapLeft(
      SemanticCompiler.compile(model, Dashboard.tileQuery(file, tile) ?? query.semantic, dialect),
      (e) => e.message
    )
  }

  return (subject) =>
    Effect.gen(function*() {
      const paths = subject.touchedPaths.filter((path) =>
        Dashboard.isDashboardPath(path) && HashMap.has(subject.files, path)
      )
      if (paths.length === 0) return []
      const read = SemanticLayer.libraryModels(subject.files)
      // Only connectors the one filing or merging may use: a check's messages carry its database's words.
      const connectors = yield* ConnectorUse.usable(
        repo,
        subject.principal,
        subject.organizationId,
        yield* DateTime.now
      )
      const checks: Array<ChangeCheck.Check> = []
      for (const path of paths) {
        const text = new TextDecoder().decode(HashMap.unsafeGet(subject.files, path))
        const parsed = Dashboard.parse(path, text)
        if (Either.isLeft(parsed)) {
          checks.push(
            new ChangeCheck.Check({
              name: `${path}: format`,
              status: "failed",
              messages: parsed.left.map(Dashboard.formatProblem)
            })
          )
          continue
        }
        checks.push(new ChangeCheck.Check({ name: `${path}: format`, status: "passed", messages: [] }))
        const file = parsed.right
        const connector = connectors.find((c) => c.config.name === file.connector)
        const governing = connector === undefined ? undefined : SemanticLayer.governingModel(read, connector)
        if (connector === undefined || governing === undefined || "problems" in governing) {
          checks.push(
            new ChangeCheck.Check({
              name: `${path}: tiles`,
              status: "failed",
              messages: [
                connector === undefined
                  ? `no connector named ${file.connector} that you may use`
                  : governing === undefined
                  ? `no semantic model of the library governs connector ${file.connector}: tiles need one`
                  : `the semantic model of connector ${file.connector} does not read`
              ]
            })
          )
          continue
        }
        const name = `${path}: tiles on connector ${connector.config.name} (${connector.id})`
        const check = (status: ChangeCheck.CheckStatus, messages: ReadonlyArray<string>) =>
          new ChangeCheck.Check({ name, status, messages, connector_id: connector.id })
        const compiled = Dashboard.check(path, text, file, governing, SemanticLayer.dialectOf(connector))
        if (compiled.length > 0) {
          checks.push(check("failed", compiled.map(Dashboard.formatProblem)))
          continue
        }
        const problems: Array<string> = []
        for (const [i, tile] of file.tiles.entries()) {
          const where = `tiles.${i} (${tile.title})`
          const compiled = statementOf(file, tile, governing, connector, subject.principal)
          if (Either.isLeft(compiled)) {
            problems.push(`${where}: ${compiled.left}`)
            continue
          }
          const planned = yield* Effect.either(runtime.query(connector, {
            sql: `EXPLAIN SELECT 1 FROM (${compiled.right.sql}) AS sightline_tile`,
            params: compiled.right.params,
            clientAttributesJson: Policy.clientAttributesJson(subject.principal),
            maxRows: 1,
            timeoutMillis: planTimeoutMillis
          }))
          if (Either.isLeft(planned)) {
            problems.push(`${where}: ${ConnectorRuntime.messageWithoutData(planned.left)}`)
          }
        }
        checks.push(check(problems.length === 0 ? "passed" : "failed", problems))
      }
      return checks
    })
})

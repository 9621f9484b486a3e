/**
 * The checks of a change that touches semantic models: each touched model reads (YAML, the format,
 * unique names, references, each verified query one SELECT or WITH query), and on every connector it
 * governs in the organization its tables, expressions, relationship keys, metrics and verified
 * queries plan (`EXPLAIN`, read-only, with sample parameters). A connector that cannot be reached
 * skips its check, saying why.
 *
 * Nobody has reviewed what a change holds when its checks run, so a probe is planned, never run:
 * it is wrapped as `EXPLAIN SELECT 1 FROM (<probe>) AS sightline_probe`, where no leading keyword
 * (`ANALYZE`) can turn the plan into a run; it runs under the client attributes of whoever files or
 * approves (skipped where a key with attributes may not run written SQL); and a failure's message
 * is kept only where its SQLSTATE says it cannot hold a row's value
 * (`ConnectorRuntime.messageWithoutData`).
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
import * as ConnectorUse from "./internal/connectorUse.js"
import * as Policy from "./Policy.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as SemanticModel from "./SemanticModel.js"
import * as SemanticProbes from "./SemanticProbes.js"

/** How long one probe may plan. */
const probeTimeoutMillis = 10_000

/**
 * The checker of semantic models, over the connectors and their runtime in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const checker: Effect.Effect<
  ChangeChecks.Checker,
  never,
  ConnectorRepo | ConnectorRuntime.ConnectorRuntime
> = Effect.gen(
  function*() {
    const repo = yield* ConnectorRepo
    const runtime = yield* ConnectorRuntime.ConnectorRuntime

    /** What fails to plan on one connector, one line per problem. */
    const live = (
      model: SemanticModel.SemanticModel,
      connector: Connector.ConnectorRecord,
      clientAttributesJson: string
    ) =>
      Effect.gen(function*() {
        const problems: Array<string> = []
        // A table that fails as a whole makes its parts moot; any failing part makes the verified
        // queries that read the table moot: the one message says what to fix.
        const failedTables = new Set<string>()
        const failingTables = new Set<string>()
        for (const probe of SemanticProbes.probes(model, SemanticLayer.dialectOf(connector))) {
          if (probe.table !== undefined && failedTables.has(probe.table)) continue
          if (probe.reads?.some((table) => failingTables.has(table))) continue
          if (probe.error !== undefined) {
            problems.push(`${probe.subject}: ${probe.error}`)
            continue
          }
          const planned = yield* Effect.either(runtime.query(connector, {
            sql: `EXPLAIN SELECT 1 FROM (${probe.sql}) AS sightline_probe`,
            params: probe.params,
            clientAttributesJson,
            maxRows: 1,
            timeoutMillis: probeTimeoutMillis
          }))
          if (Either.isLeft(planned)) {
            problems.push(`${probe.subject}: ${ConnectorRuntime.messageWithoutData(planned.left)}`)
            if (probe.table !== undefined) {
              failingTables.add(probe.table)
              if (probe.subject === `table ${probe.table}`) failedTables.add(probe.table)
            }
          }
        }
        return problems
      })

    return (subject) =>
      Effect.gen(function*() {
        const paths = subject.touchedPaths.filter((path) =>
          SemanticModel.isModelPath(path) && HashMap.has(subject.files, path)
        )
        if (paths.length === 0) return []
        const read = SemanticLayer.libraryModels(subject.files)
        // Only connectors the one filing or merging may use: a check's messages name the connector
        // and carry its database's words.
        const connectors = yield* ConnectorUse.usable(
          repo,
          subject.principal,
          subject.organizationId,
          yield* DateTime.now
        )
        const checks: Array<ChangeCheck.Check> = []
        for (const path of paths) {
          const broken = read.broken.find((b) => b.path === path)
          if (broken !== undefined) {
            checks.push(
              new ChangeCheck.Check({
                name: `${path}: format`,
                status: "failed",
                messages: broken.problems.map(SemanticModel.formatProblem)
              })
            )
            continue
          }
          const model = read.models.find((m) => m.path === path)!
          checks.push(new ChangeCheck.Check({ name: `${path}: format`, status: "passed", messages: [] }))
          const governed = connectors.filter((c) => SemanticLayer.governingModel(read, c) === model)
          if (governed.length === 0) {
            const target = model.file.connector === undefined
              ? `no ${model.file.connector_type ?? "such"} connector`
              : `no connector named ${model.file.connector}`
            checks.push(
              new ChangeCheck.Check({
                name: `${path}: connectors`,
                status: "skipped",
                messages: [`${target} that you may use has this model: nothing to check it against`]
              })
            )
            continue
          }
          for (const connector of governed) {
            const name = `${path}: connector ${connector.config.name} (${connector.id})`
            const check = (status: ChangeCheck.CheckStatus, messages: ReadonlyArray<string>) =>
              new ChangeCheck.Check({ name, status, messages, connector_id: connector.id })
            // The model's SQL is written SQL too: a key with client attributes runs it only where
            // the database enforces them, as for any SQL written for it.
            const refusal = ConnectorUse.rawSqlRefusal(subject.principal, connector)
            if (refusal !== undefined) {
              checks.push(check("skipped", [refusal]))
              continue
            }
            const reachable = yield* Effect.either(runtime.introspect(connector))
            if (Either.isLeft(reachable)) {
              checks.push(check("skipped", [`could not read the connector's schema: ${reachable.left.message}`]))
              continue
            }
            const problems = yield* live(model, connector, Policy.clientAttributesJson(subject.principal))
            checks.push(check(problems.length === 0 ? "passed" : "failed", problems))
          }
        }
        return checks
      })
  }
)

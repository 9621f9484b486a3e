/**
 * What every import ends with: the model with what does not compile taken out. A metric or a
 * verified query the compiler cannot write on the imported model (a dimension no relationship
 * reaches, a measure its kind cannot accumulate) is refused in the report with the compiler's
 * message, never kept as if it ran.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as SemanticCompiler from "../../SemanticCompiler.js"
import * as SemanticModel from "../../SemanticModel.js"
import * as SemanticProbes from "../../SemanticProbes.js"
import type * as Importing from "./importing.js"

/**
 * The model with what does not compile taken out, each removal a refusal in the report: a metric
 * (and what reads it) or a saved query that the compiler cannot write is not kept as if it could be.
 */
export const checked = (
  file: SemanticModel.SemanticModelFile,
  source: ReadonlyArray<Importing.ReportLine>,
  firstFile: string
): Importing.Imported => {
  const report = source.map((line) => ({ ...line }))
  let current = file
  for (let round = 0; round < 10; round++) {
    const problems: Array<{ kind: "metric" | "verified query"; name: string; message: string }> = []
    const validated = SemanticModel.validate(`semantic/${current.name}.yaml`, current)
    if (Either.isLeft(validated)) {
      // A metric that reads one taken out no longer holds together: it goes too.
      for (const problem of validated.left) {
        const metric = /^metric (\w+)[: ]/.exec(problem.message)?.[1]
        if (metric !== undefined) problems.push({ kind: "metric", name: metric, message: problem.message })
      }
      if (problems.length === 0) break
    } else {
      const model = validated.right
      for (const metric of [...model.measures.map((m) => m.name), ...model.metrics.map((m) => m.name)]) {
        const compiled = SemanticCompiler.compile(model, SemanticProbes.probeQuery(model, metric), "postgres")
        if (Either.isLeft(compiled)) problems.push({ kind: "metric", name: metric, message: compiled.left.message })
      }
      // SQL a person wrote is the change's probes' to run; a semantic query is the compiler's.
      for (const query of model.verifiedQueries.filter((q) => q.query !== undefined)) {
        const compiled = SemanticCompiler.verifiedSql(model, query, {}, "postgres")
        if (Either.isLeft(compiled)) {
          problems.push({ kind: "verified query", name: query.name, message: compiled.left.message })
        }
      }
    }
    if (problems.length === 0) break
    for (const problem of problems) {
      const note = `it does not compile: ${problem.message}`
      // An importer names a construct by itself (`revenue`) or by its place (`orders.revenue`).
      const line = report.find((l) =>
        (l.name === problem.name || l.name.endsWith(`.${problem.name}`)) &&
        (problem.kind === "metric" ? l.construct !== "saved query" : l.construct !== "metric")
      )
      if (line !== undefined) Object.assign(line, { outcome: "refused", note })
      else report.push({ file: firstFile, construct: problem.kind, name: problem.name, outcome: "refused", note })
    }
    const dropped = new Set(problems.map((p) => p.name))
    current = {
      ...current,
      tables: current.tables.map((t) =>
        t.measures?.some((m) => dropped.has(m.name)) === true
          ? { ...t, measures: t.measures.filter((m) => !dropped.has(m.name)) }
          : t
      ) as unknown as SemanticModel.SemanticModelFile["tables"],
      metrics: current.metrics?.filter((m) => !dropped.has(m.name)),
      verified_queries: current.verified_queries?.filter((q) => !dropped.has(q.name))
    }
  }
  // In the order the source says them.
  report.sort((a, b) => a.file.localeCompare(b.file) || (a.line ?? 0) - (b.line ?? 0))
  return { model: current, report }
}

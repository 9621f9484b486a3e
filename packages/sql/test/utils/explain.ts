/**
 * Query plans of the statements a repository actually runs: `capturePlans` intercepts every
 * statement an effect executes (through `@effect/sql`'s statement transformer), and EXPLAINs each
 * SELECT (or each statement `which` matches) with its real parameters on the same connection
 * before letting it run. A plain EXPLAIN plans a statement that writes without running it.
 */
import * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

/** One statement that ran, with its plan (EXPLAIN's text format, one line per plan node). */
export interface CapturedPlan {
  readonly sql: string
  readonly plan: string
}

/** Runs `effect`, and returns its result with the plan of every SELECT (or `which`) it executed. */
export const capturePlans = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  which: RegExp = /^\s*SELECT\b/i
): Effect.Effect<{ readonly result: A; readonly plans: ReadonlyArray<CapturedPlan> }, E, R> =>
  Effect.suspend(() => {
    const plans: Array<CapturedPlan> = []
    return effect.pipe(
      Statement.withTransformer((statement, sql) => {
        const [text, params] = statement.compile()
        if (!which.test(text)) return Effect.succeed(statement)
        return sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, params).pipe(
          Statement.withTransformerDisabled,
          Effect.map((rows) => {
            plans.push({ sql: text, plan: rows.map((row) => row["QUERY PLAN"]).join("\n") })
            return statement
          }),
          Effect.orDie
        )
      }),
      Effect.map((result) => ({ result, plans }))
    )
  })

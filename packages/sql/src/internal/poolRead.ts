/**
 * The hot reads (the credential of every authenticated request, a playbook, a page of chats) run
 * straight on PostgreSQL's pool. `@effect/sql` executes each statement inside a span, a scope and a
 * connection acquisition of its own: on `bench:http`'s machine that cost 0.06–0.09 ms of CPU per
 * statement, twice what `pg` itself spends on it. The statement is still written and compiled by
 * `@effect/sql`, so its text and parameters are exactly what the client would send; only the
 * execution is direct. Inside a transaction it runs on the transaction's connection as always, under
 * a statement transformer it goes through the transformer, and without a pool (PGlite) it is the
 * statement itself.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** What a direct read needs of a pool: `pg.Pool`'s `query` with a callback. */
export interface Pool {
  readonly query: (
    text: string,
    values: Array<unknown>,
    callback: (error: Error | undefined, result: { readonly rows: Array<any> }) => void
  ) => void
}

/** The pool under the `SqlClient`, where it has one (the PostgreSQL client provides it). */
export class PoolReads extends Context.Tag("@sightline/sql/PoolReads")<PoolReads, Pool>() {}

const transactionKey = SqlClient.TransactionConnection.key

/**
 * How the repository made at layer time runs its hot reads: on the pool when the `SqlClient` has
 * one, else as any statement.
 */
export const reader: Effect.Effect<
  <A>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>
> = Effect.map(
  Effect.serviceOption(PoolReads),
  Option.match({
    onNone: () => (statement) => statement,
    onSome: (pool) => (statement) =>
      Effect.withFiberRuntime((fiber) => {
        // A transaction's connection, or a statement transformer (`Statement.withTransformer`) to apply.
        if (
          fiber.currentContext.unsafeMap.has(transactionKey) ||
          Option.isSome(fiber.getFiberRef(Statement.currentTransformer))
        ) return statement
        const [text, params] = statement.compile()
        return Effect.async<ReadonlyArray<any>, SqlError>((resume) => {
          // No canceller: an interrupted read finishes on its own and `pg-pool` releases its connection.
          pool.query(text, params as Array<unknown>, (cause, result) => {
            resume(
              cause === undefined || cause === null
                ? Effect.succeed(result.rows)
                : Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
            )
          })
        })
      })
  })
)

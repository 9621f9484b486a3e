/**
 * The hot reads (the credential of every authenticated request, a playbook, a page of chats) run
 * straight on the store's connections. `@effect/sql` executes each statement inside a span, a scope
 * and a connection acquisition of its own: on `bench:http`'s machine that cost 0.06–0.09 ms of CPU
 * per statement on PostgreSQL, twice what `pg` itself spends on it. The statement is still written
 * and compiled by `@effect/sql`, so its text and parameters are exactly what the client would send;
 * only the execution is direct (`reader`), and for the reads made again and again, so is the
 * compiling (`compiledReader`: once, with stand-ins for the arguments). Inside a transaction it runs
 * on the transaction's connection as always, under a statement transformer it goes through the
 * transformer, and without `PoolReads` it is the statement itself.
 *
 * The two writes on every answer's path (a batch of its events, and its end) run here too: each is
 * one statement, its own transaction outside one as much as through the client, and the client's
 * execution cost about 0.06 ms before each answer's `done` on PostgreSQL (`pnpm bench:chat`).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"

/**
 * What a direct read needs of a store: one statement, with its parameters, outside any transaction.
 * PostgreSQL's pool takes it on a free connection; PGlite's one session takes it once no transaction
 * holds the session.
 */
export interface Pool {
  readonly query: (text: string, values: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<any>, SqlError>
}

/** The direct reads of the store under the `SqlClient` (both clients of this package provide it). */
export class PoolReads extends Context.Tag("@sightline/sql/internal/poolRead/PoolReads")<PoolReads, Pool>() {}

/** `pg.Pool`'s `query`, with a callback, as the direct reads of `PoolReads`. */
export const fromPgPool = (pool: {
  readonly query: (
    text: string,
    values: ReadonlyArray<unknown>,
    callback: (error: Error | undefined, result: { readonly rows: Array<any> }) => void
  ) => void
}): Pool => ({
  query: (text, values) =>
    Effect.async<ReadonlyArray<any>, SqlError>((resume) => {
      // No canceller: an interrupted read finishes on its own and `pg-pool` releases its connection.
      pool.query(text, values, (cause, result) => {
        resume(
          cause === undefined || cause === null
            ? Effect.succeed(result.rows)
            : Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        )
      })
    })
})

const transactionKey = SqlClient.TransactionConnection.key

/** Whether a read runs as a statement of the client: in a transaction, or under a statement transformer. */
const asStatement = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentContext.unsafeMap.has(transactionKey) || Option.isSome(fiber.getFiberRef(Statement.currentTransformer))

/** `statement`, compiled here and run directly. */
const queryStatement = (pool: Pool, statement: Statement.Statement<unknown>) => {
  const [text, params] = statement.compile()
  return pool.query(text, params)
}

/**
 * How the repository made at layer time runs its hot reads: directly when the store has
 * `PoolReads`, else as any statement.
 */
export const reader: Effect.Effect<
  <A>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError>
> = Effect.map(
  Effect.serviceOption(PoolReads),
  Option.match({
    onNone: () => (statement) => statement,
    onSome: (pool) => (statement) =>
      Effect.withFiberRuntime((fiber) => asStatement(fiber) ? statement : queryStatement(pool, statement))
  })
)

// What a stand-in reads as text: found in a compiled text, an argument was spliced into it.
const standInText = "\u0000sightline:argument\u0000"

/** Stands for the `index`th argument of a compiled read while its statement is compiled. */
class Argument {
  constructor(readonly index: number) {}
  toString() {
    return standInText
  }
}

/**
 * How the repository made at layer time runs a hot read that it makes again and again: `build`
 * is compiled once, on the first direct call, with a stand-in for each argument, and every
 * later call sends the same text with its own arguments in their places. A statement's text is
 * long and made anew by every compile (the credential's is 1.5 KB), and `pg` hashes it again to
 * find its prepared statement (12% of the server's CPU per `GET /v2/playbooks/{id}`). `build` must
 * use its arguments as parameters (`${arg}`) only, never to shape the statement (a test of an
 * argument would see the stand-in); one whose argument ends up in the text (`sql.literal(arg)`)
 * is compiled on every call. In a transaction, under a transformer and without `PoolReads`,
 * `build(...args)` runs as any statement.
 */
export const compiledReader: Effect.Effect<
  <Args extends ReadonlyArray<unknown>, A>(
    build: (...args: Args) => Statement.Statement<A>
  ) => (...args: Args) => Effect.Effect<ReadonlyArray<A>, SqlError>
> = Effect.map(
  Effect.serviceOption(PoolReads),
  Option.match({
    // Without direct reads, the statement itself.
    onNone: () => (build) => build,
    onSome: (pool) => <Args extends ReadonlyArray<unknown>, A>(build: (...args: Args) => Statement.Statement<A>) => {
      let compiled:
        | { readonly arity: number; readonly text: string; readonly params: ReadonlyArray<unknown> }
        | null
        | undefined
      // Compiled with as many stand-ins as the first call has arguments; a call with another number
      // of them is compiled on its own.
      const compile = (arity: number) => {
        const [text, params] = build(...Array.from({ length: arity }, (_, i) => new Argument(i)) as never).compile()
        return text.includes(standInText) ? null : { arity, text, params }
      }
      return (...args: Args) =>
        Effect.withFiberRuntime((fiber) => {
          if (asStatement(fiber)) return build(...args)
          if (compiled === undefined) compiled = compile(args.length)
          if (compiled === null || compiled.arity !== args.length) return queryStatement(pool, build(...args))
          const values = compiled.params.map((param) => param instanceof Argument ? args[param.index] : param)
          return pool.query(compiled.text, values)
        })
    }
  })
)

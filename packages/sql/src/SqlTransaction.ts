/**
 * Core's `Transaction` port over `@effect/sql`: `withTransaction` opens a database transaction, and
 * a nested call opens a savepoint inside it (so an inner failure that the outer code recovers from
 * rolls back only the inner writes).
 *
 * Failing to begin or commit is an infrastructure failure, hence a defect (core never sees
 * `SqlError`). Repository calls made inside the effect run on the transaction's connection.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Transaction } from "@sightline/core/Transaction"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const isSqlError = (u: unknown): u is SqlError => u instanceof SqlError

/**
 * The transaction service over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Transaction.Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => ({
    withTransaction: (effect) => Effect.catchIf(sql.withTransaction(effect), isSqlError, Effect.die)
  })
)

/**
 * `Transaction` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transaction, never, SqlClient.SqlClient> = Layer.effect(Transaction, make)

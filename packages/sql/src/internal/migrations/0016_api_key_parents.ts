/**
 * Migration 16: a key minted with a key remembers its parent (`parent_key_id`), so that revoking
 * the parent revokes it (and its own children, down the chain). A rotation hands the children to
 * the replacement key.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the parent column and the index the cascade walks. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    // No foreign key: a parent is never deleted (keys are revoked, not removed), and the cascade is
    // the use case's, inside the revocation's transaction.
    yield* sql`ALTER TABLE ${name("api_keys")} ADD COLUMN parent_key_id uuid`
    yield* sql`CREATE INDEX ${name("api_keys_parent_idx")} ON ${name("api_keys")} (organization_id, parent_key_id)
      WHERE parent_key_id IS NOT NULL`
  })

/**
 * Drops a benchmark's store on PostgreSQL (ours only: its prefix is random), tables and trigger
 * functions alike.
 */
import * as Migrations from "@sightline/sql/Migrations"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Effect from "effect/Effect"

export const dropStore = (url: string, prefix: string): Promise<void> =>
  Effect.runPromise(Migrations.drop.pipe(Effect.provide([PostgresClient.layer({ url }), TablePrefix.layer(prefix)])))

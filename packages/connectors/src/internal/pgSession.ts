/**
 * A `Session` over a `pg` client: the capped query reads through a cursor, so a statement that
 * would return millions of rows fetches only what is kept.
 *
 * @internal
 */
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import type pg from "pg"
import Cursor from "pg-cursor"
import type { Rows, Session } from "./postgresDialect.js"

// Rows fetched per round trip.
const batchRows = 1000

export const make = (client: pg.PoolClient | pg.Client): Session => ({
  query: async (text, params) => {
    const result = await client.query({ text, values: [...params], rowMode: "array" })
    return { fields: result.fields, rows: result.rows, truncated: false, affectedRows: result.rowCount ?? undefined }
  },
  queryCapped: (text, params, max, maxBytes) =>
    new Promise<Rows>((resolve, reject) => {
      const cursor = client.query(new Cursor(text, [...params], { rowMode: "array" }))
      const kept: Array<ReadonlyArray<unknown>> = []
      let bytes = 0
      // A read past the end answers no result: the first one's is kept.
      let fields: Rows["fields"] = []
      let affectedRows: number | undefined
      // Read in batches, so that neither the row cap nor the byte cap is overrun by more than a batch.
      const next = () =>
        cursor.read(Math.min(batchRows, max + 1 - kept.length), (error, rows, result) => {
          // After an error pg-cursor syncs the connection itself; closing is only for a good portal.
          if (error) return reject(error)
          if (result !== undefined) {
            fields = result.fields ?? fields
            affectedRows = result.rowCount ?? affectedRows
          }
          let full = false
          for (const row of rows as unknown as ReadonlyArray<ReadonlyArray<unknown>>) {
            bytes += ConnectorRuntime.approximateBytes(row)
            if (kept.length === max || bytes > maxBytes) {
              full = true
              break
            }
            kept.push(row)
          }
          if (!full && rows.length > 0 && kept.length <= max) return next()
          cursor.close(() => resolve({ fields, rows: kept, truncated: full, affectedRows }))
        })
      next()
    })
})

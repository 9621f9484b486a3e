/**
 * A `Session` over a `pg` client: the capped query reads through a cursor, so a statement that
 * would return millions of rows fetches only what is kept.
 *
 * @internal
 */
import type pg from "pg"
import Cursor from "pg-cursor"
import type { Rows, Session } from "./postgresDialect.js"

export const make = (client: pg.PoolClient | pg.Client): Session => ({
  query: async (text, params) => {
    const result = await client.query({ text, values: [...params], rowMode: "array" })
    return { fields: result.fields, rows: result.rows, truncated: false, affectedRows: result.rowCount ?? undefined }
  },
  queryCapped: (text, params, max) =>
    new Promise<Rows>((resolve, reject) => {
      const cursor = client.query(new Cursor(text, [...params], { rowMode: "array" }))
      cursor.read(max + 1, (error, rows, result) => {
        // After an error pg-cursor syncs the connection itself; closing is only for a good portal.
        if (error) return reject(error)
        cursor.close(() =>
          resolve({
            fields: result.fields ?? [],
            rows: rows.slice(0, max) as unknown as ReadonlyArray<ReadonlyArray<unknown>>,
            truncated: rows.length > max,
            affectedRows: result.rowCount ?? undefined
          })
        )
      })
    })
})

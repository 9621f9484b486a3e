/**
 * A `Session` over PGlite (the DEMO connector's embedded database).
 *
 * @internal
 */
import type { PGlite } from "@electric-sql/pglite"
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import type { Session } from "./postgresDialect.js"

export const make = (db: PGlite): Session => {
  const query = async (text: string, params: ReadonlyArray<unknown>) => {
    const result = await db.query<Array<unknown>>(text, [...params], { rowMode: "array" })
    return { fields: result.fields, rows: result.rows, truncated: false, affectedRows: result.affectedRows }
  }
  return {
    query,
    // PGlite has no cursors over its protocol: the demo's tables are small enough to read whole.
    queryCapped: async (text, params, max, maxBytes) => {
      const result = await query(text, params)
      let bytes = 0
      let count = 0
      for (const row of result.rows) {
        bytes += ConnectorRuntime.approximateBytes(row)
        if (count === max || bytes > maxBytes) break
        count++
      }
      return { ...result, rows: result.rows.slice(0, count), truncated: count < result.rows.length }
    }
  }
}

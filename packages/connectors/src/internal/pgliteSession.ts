/**
 * A `Session` over the DEMO connector's embedded database, in its worker (`demoWorker.ts`): every
 * statement of the session shares one deadline, and the interruption of the session's fiber
 * (its `signal`) stops the statement running.
 *
 * @internal
 */
import type { DemoWorker, Limits } from "./demoWorker.js"
import type { Session } from "./postgresDialect.js"

export const make = (worker: DemoWorker, timeoutMillis: number, signal: AbortSignal): Session => {
  const deadline = Date.now() + timeoutMillis
  const limits = (): Limits => ({ timeoutMillis: Math.max(0, deadline - Date.now()), signal })
  return {
    query: (text, params) => worker.query(text, params, undefined, limits()),
    // PGlite has no cursors over its protocol: the worker reads the result whole and caps it there.
    queryCapped: (text, params, max, maxBytes) => worker.query(text, params, { max, maxBytes }, limits())
  }
}

/**
 * The DEMO database in a worker thread of its own, so that no query on it holds the server's event
 * loop: PGlite is PostgreSQL compiled to WebAssembly, and a statement runs synchronously on the
 * thread that holds it (`SELECT pg_sleep(15)` froze every request of every organization for 15 s).
 *
 * The worker is the one thing that can stop such a statement: PGlite has no second thread to
 * deliver a cancel, and `statement_timeout` needs the timer signals WebAssembly lacks. So a query
 * past its deadline, or interrupted, terminates the worker; the next query opens the database again
 * from a snapshot (about 2 s). A worker whose WebAssembly memory grew past `recycleHeapBytes` (a huge
 * `repeat()` grows it by gigabytes, and WebAssembly memory never shrinks) is retired after its session.
 *
 * The worker's program is plain JavaScript evaluated by `worker_threads`: the same text runs under
 * the test runner (TypeScript sources), the library's build and the server's single-file bundle,
 * none of which would otherwise ship a second entry point. It loads PGlite from the path this
 * module resolves, and caps results in the worker with core's `approximateBytes`, so that an
 * oversized result is never copied to the server's heap.
 *
 * @internal
 */
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type { Rows } from "./postgresDialect.js"

/** WebAssembly memory past which a worker is retired after its query (a fresh one holds ~200 MB). */
export const recycleHeapBytes = 512 * 1024 * 1024

/** How the worker's database starts: loaded from a cluster's tarball, or built by statements. */
export type Opening =
  | { readonly load: Blob }
  | { readonly statements: ReadonlyArray<string> }

/** What a query may take: a deadline, and a signal that abandons it. */
export interface Limits {
  readonly timeoutMillis: number
  readonly signal?: AbortSignal | undefined
}

/** The database's failure (PostgreSQL's message and SQLSTATE), or the worker's end. */
export class DemoError extends Error {
  constructor(message: string, readonly code?: string | undefined) {
    super(message)
  }
}

/** A started worker holding one PGlite session. */
export interface DemoWorker {
  /** Runs one statement; at most `max` rows and about `maxBytes` of them. */
  readonly query: (
    text: string,
    params: ReadonlyArray<unknown>,
    cap: { readonly max: number; readonly maxBytes: number } | undefined,
    limits: Limits
  ) => Promise<Rows>
  /** The cluster as a gzipped tarball (a snapshot to open the next worker from). */
  readonly dump: () => Promise<Blob>
  /** Whether the worker was stopped (past a deadline, interrupted or closed). */
  readonly stopped: () => boolean
  /** Whether its WebAssembly memory grew past `recycleHeapBytes`: it is to be retired. */
  readonly oversized: () => boolean
  readonly close: () => Promise<void>
}

const program = `
const { parentPort, workerData } = require("node:worker_threads")
const { PGlite } = require(workerData.pglite)
const approximateBytes = ${ConnectorRuntime.approximateBytes.toString()}
const config = { postgresqlconf: ["shared_buffers = 16MB"] }
let db
const heap = () => db.mod.HEAPU8.length
parentPort.on("message", async (message) => {
  try {
    if (message.type === "open") {
      db = await PGlite.create(message.load === undefined ? config : { ...config, loadDataDir: message.load })
      if (message.statements !== undefined) for (const statement of message.statements) await db.exec(statement)
      parentPort.postMessage({ id: message.id, heap: heap() })
    } else if (message.type === "dump") {
      parentPort.postMessage({ id: message.id, tarball: await db.dumpDataDir("gzip"), heap: heap() })
    } else {
      const result = await db.query(message.text, message.params, { rowMode: "array" })
      let rows = result.rows
      if (message.cap !== undefined) {
        let bytes = 0
        let count = 0
        for (const row of rows) {
          bytes += approximateBytes(row)
          if (count === message.cap.max || bytes > message.cap.maxBytes) break
          count++
        }
        rows = rows.slice(0, count)
      }
      const fields = result.fields.map((field) => ({ name: field.name, dataTypeID: field.dataTypeID }))
      parentPort.postMessage({
        id: message.id,
        rows: { fields, rows, truncated: rows.length < result.rows.length, affectedRows: result.affectedRows },
        heap: heap()
      })
    }
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: { message: String(error && error.message || error), code: error && typeof error.code === "string" ? error.code : undefined }
    })
  }
})
`

interface Reply {
  readonly id: number
  readonly heap: number
  readonly rows?: Rows
  readonly tarball?: Blob
  readonly error?: { readonly message: string; readonly code?: string | undefined }
}

/** Starts a worker and opens its database (building it may take seconds, off this thread). */
export const start = async (opening: Opening): Promise<DemoWorker> => {
  const worker = new Worker(program, {
    eval: true,
    workerData: { pglite: createRequire(import.meta.url).resolve("@electric-sql/pglite") }
  })
  // The worker holds no work of the process's own: it must not keep the process alive.
  worker.unref()
  let stopped = false
  let heap = 0
  let next = 0
  const pending = new Map<number, { readonly resolve: (reply: Reply) => void; readonly reject: (e: Error) => void }>()
  const stop = (reason: string) => {
    if (stopped) return
    stopped = true
    void worker.terminate()
    for (const { reject } of pending.values()) reject(new DemoError(reason))
    pending.clear()
  }
  worker.on("message", (reply: Reply) => {
    const waiting = pending.get(reply.id)
    pending.delete(reply.id)
    waiting?.resolve(reply)
  })
  worker.on("error", (error) => stop(`the DEMO database stopped: ${error.message}`))
  worker.on("exit", () => stop("the DEMO database stopped"))

  const call = (message: Record<string, unknown>, limits?: Limits): Promise<Reply> => {
    if (stopped) return Promise.reject(new DemoError("the DEMO database stopped"))
    const id = next++
    return new Promise<Reply>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const abandon = () => stop("canceling statement due to user request")
      const settle = () => {
        if (timer !== undefined) clearTimeout(timer)
        limits?.signal?.removeEventListener("abort", abandon)
      }
      pending.set(id, {
        resolve: (reply) => {
          settle()
          heap = reply.heap
          if (reply.error === undefined) resolve(reply)
          else reject(new DemoError(reply.error.message, reply.error.code))
        },
        reject: (error) => {
          settle()
          reject(error)
        }
      })
      if (limits !== undefined) {
        timer = setTimeout(() => stop("canceling statement due to statement timeout"), limits.timeoutMillis)
        if (limits.signal?.aborted === true) abandon()
        else limits.signal?.addEventListener("abort", abandon, { once: true })
      }
      worker.postMessage({ ...message, id })
    })
  }

  await call(
    "load" in opening ? { type: "open", load: opening.load } : { type: "open", statements: opening.statements }
  ).catch((error: unknown) => {
    stop("the DEMO database did not open")
    throw error
  })
  return {
    query: (text, params, cap, limits) =>
      call({ type: "query", text, params: [...params], cap }, limits).then((reply) => reply.rows!),
    dump: () => call({ type: "dump" }).then((reply) => reply.tarball!),
    stopped: () => stopped,
    oversized: () => heap > recycleHeapBytes,
    close: async () => {
      stop("the DEMO database closed")
    }
  }
}

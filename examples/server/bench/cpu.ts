/**
 * CPU time of processes, read from `/proc`, for the benchmarks' CPU-per-request figures: the figure
 * that survives a noisy machine, where latency and throughput move with whatever else runs.
 *
 * Times come from `schedstat` (nanoseconds on the CPU), summed over a process's threads, so a
 * Node.js server's garbage-collector and compiler threads count with its main thread. `stat`'s
 * clock ticks (10 ms each) were too coarse to read around a single answer.
 */
import { readdirSync, readFileSync } from "node:fs"

const threadNs = (path: string): number => Number(readFileSync(path, "utf8").split(" ")[0])

/**
 * The CPU milliseconds of a process so far, over its live threads (0 once it has ended). A thread
 * that has ended takes its time with it; the servers measured here keep theirs.
 */
export const processCpuMs = (pid: number | string): number => {
  let ns = 0
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += threadNs(`/proc/${pid}/task/${task}/schedstat`)
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    return 0 // the process ended
  }
  return ns / 1e6
}

/** The CPU milliseconds of every `postgres` process (the server and its backends). */
export const postgresCpuMs = (): number => {
  let total = 0
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") total += processCpuMs(pid)
    } catch {
      // gone meanwhile
    }
  }
  return total
}

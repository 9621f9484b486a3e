/**
 * Sandbox processes from the server's side: the persistent kernel (JSON lines over its stdin and
 * stdout) and one-shot commands with capped output. Both are killed as a tree: bubblewrap is the
 * parent of everything in the sandbox's PID namespace, and when it dies the namespace dies with it.
 *
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import { constants as osConstants } from "node:os"

/** How a kernel request ended. */
export type Outcome =
  | { readonly _tag: "Answer"; readonly value: Record<string, unknown> }
  | {
    readonly _tag: "Exited"
    readonly code: number | null
    readonly signal: NodeJS.Signals | null
    readonly stderr: string
  }
  | { readonly _tag: "TimedOut" }
  /** The answer grew past `maxAnswerChars` without ending: the kernel was killed. */
  | { readonly _tag: "Overflowed"; readonly limit: number }

const STDERR_TAIL = 4096

/**
 * The longest answer line a kernel may send (characters of JSON): results and outputs are capped
 * inside the kernel well below it, so only code writing to the answer channel itself reaches it.
 */
export const maxAnswerChars = 64 * 1024 * 1024

/** A running kernel. One request at a time (the runtime serializes them). */
export class Kernel {
  // The line being received, in pieces: each chunk is scanned once, and joined only at its newline
  // (appending to one string and searching it whole per chunk was quadratic).
  private pending: Array<string> = []
  private pendingChars = 0
  private overflowed = false
  private readonly lines: Array<string> = []
  private waiter: (() => void) | undefined
  private stderrTail = ""
  exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8")
    child.stdout!.on("data", (chunk: string) => {
      if (this.overflowed) return
      let rest = chunk
      let newline = rest.indexOf("\n")
      while (newline >= 0) {
        this.pending.push(rest.slice(0, newline))
        this.lines.push(this.pending.join(""))
        this.pending = []
        this.pendingChars = 0
        rest = rest.slice(newline + 1)
        newline = rest.indexOf("\n")
      }
      if (rest !== "") {
        this.pending.push(rest)
        this.pendingChars += rest.length
      }
      if (this.pendingChars > maxAnswerChars) {
        // Stopped, and told apart from a crash: the request answers `Overflowed`.
        this.overflowed = true
        this.pending = []
        this.pendingChars = 0
        this.kill()
      }
      this.wake()
    })
    // Code's own output goes to stderr (see the driver); only a tail is kept, to explain a crash.
    child.stderr!.setEncoding("utf8")
    child.stderr!.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL)
    })
    child.stdin!.on("error", () => undefined)
    child.on("exit", (code, signal) => {
      this.exit = { code, signal }
      this.wake()
    })
    child.on("error", () => {
      this.exit ??= { code: null, signal: null }
      this.wake()
    })
  }

  private wake() {
    const waiter = this.waiter
    this.waiter = undefined
    waiter?.()
  }

  private next(timeoutMillis: number): Promise<Outcome> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined
        resolve({ _tag: "TimedOut" })
      }, timeoutMillis)
      const check = () => {
        const line = this.lines.shift()
        if (line !== undefined) {
          clearTimeout(timer)
          try {
            resolve({ _tag: "Answer", value: JSON.parse(line) })
          } catch {
            resolve({ _tag: "Exited", code: null, signal: null, stderr: `unreadable answer: ${line.slice(0, 200)}` })
          }
        } else if (this.overflowed) {
          clearTimeout(timer)
          resolve({ _tag: "Overflowed", limit: maxAnswerChars })
        } else if (this.exit !== undefined) {
          clearTimeout(timer)
          resolve({ _tag: "Exited", ...this.exit, stderr: this.stderrTail })
        } else {
          this.waiter = check
        }
      }
      check()
    })
  }

  /** Starts a kernel and waits for it to say it is ready. */
  static async start(file: string, args: ReadonlyArray<string>, timeoutMillis: number): Promise<Kernel> {
    const kernel = new Kernel(spawn(file, args, { stdio: ["pipe", "pipe", "pipe"] }))
    const ready = await kernel.next(timeoutMillis)
    if (ready._tag !== "Answer" || ready.value.ready !== true) {
      kernel.kill()
      throw new Error(
        ready._tag === "TimedOut"
          ? "the Python kernel did not start in time"
          : ready._tag === "Exited"
          ? `the Python kernel could not start: ${ready.stderr.trim().split("\n").slice(-1)[0] || `exit ${ready.code}`}`
          : "the Python kernel answered something unexpected"
      )
    }
    return kernel
  }

  /** Sends one request and waits for its answer, the kernel's end, or the timeout. */
  request(payload: unknown, timeoutMillis: number): Promise<Outcome> {
    if (this.overflowed) return Promise.resolve({ _tag: "Overflowed", limit: maxAnswerChars })
    if (this.exit !== undefined) {
      return Promise.resolve({ _tag: "Exited", ...this.exit, stderr: this.stderrTail })
    }
    this.child.stdin!.write(`${JSON.stringify(payload)}\n`)
    return this.next(timeoutMillis)
  }

  /** Kills the kernel's whole tree. */
  kill() {
    if (this.exit === undefined) this.child.kill("SIGKILL")
  }
}

/** The result of a one-shot command. */
export interface OneShot {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
  readonly timedOut: boolean
  readonly signal: NodeJS.Signals | null
}

/** The end of an output that was cut. */
export const truncationMarker = "\n…[truncated]"

const capped = (capBytes: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let cut = false
  return {
    push: (chunk: Buffer) => {
      if (size >= capBytes) {
        cut = true
        return
      }
      const room = capBytes - size
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
      if (chunk.length > room) cut = true
      size += Math.min(room, chunk.length)
    },
    text: () => Buffer.concat(chunks).toString("utf8") + (cut ? truncationMarker : "")
  }
}

/**
 * Runs a one-shot command to its end or its timeout (then it is killed), keeping at most `capBytes`
 * of each stream. `track` sees the child while it runs, so stopping the sandbox can kill it.
 */
export const runOnce = (
  file: string,
  args: ReadonlyArray<string>,
  options: {
    readonly timeoutMillis: number
    readonly capBytes: number
    readonly track: (child: ChildProcess) => () => void
  }
): Promise<OneShot> =>
  new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] })
    const untrack = options.track(child)
    const stdout = capped(options.capBytes)
    const stderr = capped(options.capBytes)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, options.timeoutMillis)
    child.stdout!.on("data", stdout.push)
    child.stderr!.on("data", stderr.push)
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer)
      untrack()
      resolve({
        stdout: stdout.text(),
        stderr: stderr.text(),
        exitCode: code ?? (signal === null ? -1 : 128 + (osConstants.signals[signal] ?? 0)),
        timedOut,
        signal
      })
    }
    child.on("close", done)
    child.on("error", (error) => {
      clearTimeout(timer)
      untrack()
      resolve({ stdout: "", stderr: error.message, exitCode: -1, timedOut: false, signal: null })
    })
  })

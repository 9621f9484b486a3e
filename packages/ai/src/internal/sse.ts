/**
 * What every HTTP provider adapter shares: one streamed POST whose answer is Server-Sent Events.
 *
 * - Retryable failures (network errors, 408, 409, 429, 5xx) are retried with exponential backoff and
 *   full jitter, waiting at least what `Retry-After` asks (seconds or an HTTP date), only while
 *   nothing has been streamed yet.
 * - Timeouts: the response headers must arrive within `firstByteTimeout`; after that, each chunk
 *   within `idleTimeout` of the previous one, so a long answer that keeps streaming is never cut.
 * - Interruption aborts the request: the provider sees its connection closed.
 *
 * @internal
 */
import { LanguageModelError } from "@sightline/core/LanguageModel"
import type { ErrorReason } from "@sightline/core/LanguageModel"
import * as Traced from "@sightline/core/Traced"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { createParser } from "eventsource-parser"
import * as NodeHttp from "node:http"
import * as NodeHttps from "node:https"

/** Timeouts and retries of a provider. */
export interface Policy {
  /** How long to wait for the response headers (default 60 s: a model may think before answering). */
  readonly firstByteTimeout: Duration.DurationInput
  /** The longest gap between two chunks of a streamed answer (default 60 s). */
  readonly idleTimeout: Duration.DurationInput
  /** Retries after the first attempt (default 3). */
  readonly maxRetries: number
  /** The first backoff delay; each retry doubles it (default 500 ms). */
  readonly baseDelay: Duration.DurationInput
  /** The longest wait between attempts, `Retry-After` included (default 30 s). */
  readonly maxDelay: Duration.DurationInput
}

/** The default policy. */
export const defaultPolicy: Policy = {
  firstByteTimeout: Duration.seconds(60),
  idleTimeout: Duration.seconds(60),
  maxRetries: 3,
  baseDelay: Duration.millis(500),
  maxDelay: Duration.seconds(30)
}

/** One server-sent event. */
export interface Event {
  readonly event?: string | undefined
  readonly data: string
}

/** A streamed request. */
export interface Request {
  /** Names the provider in error messages. */
  readonly provider: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: unknown
  readonly policy: Policy
  /** The event that ends the answer, itself left out (`[DONE]`); without it, the body's end. */
  readonly until?: ((event: Event) => boolean) | undefined
}

interface Failure {
  readonly error: LanguageModelError
  readonly retryAfterMillis?: number | undefined
}

const fail = (reason: ErrorReason, message: string, retryAfterMillis?: number): Failure => ({
  error: new LanguageModelError({ reason, message }),
  retryAfterMillis
})

/** `Retry-After` in milliseconds: delta seconds or an HTTP date. */
export const retryAfterMillis = (header: string | null, now: number): number | undefined => {
  if (header === null || header.trim() === "") return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const reasonOf = (status: number): ErrorReason =>
  status === 429
    ? "rate_limited"
    : status === 401 || status === 403
    ? "unauthorized"
    : status === 408 || status === 409 || status >= 500
    ? "unavailable"
    : "invalid_request"

// The provider's own words, shortened: error bodies are JSON with a message somewhere, or text.
const describe = (body: string): string => {
  try {
    const parsed = JSON.parse(body)
    const message = parsed?.error?.message ?? parsed?.message ?? parsed?.error
    if (typeof message === "string") return message.slice(0, 500)
  } catch {
    // not JSON
  }
  return body.slice(0, 500)
}

/** How a provider turns its events into parts. */
export interface Decoder<A> {
  /** The parts of one event, given its JSON data (malformed data fails the generation first). */
  readonly event: (data: any) => Either.Either<ReadonlyArray<A>, LanguageModelError>
  /** The parts after the last event (assembled tool calls, the finish), read once. */
  readonly end: () => ReadonlyArray<A>
}

/**
 * The parts of a streamed POST, with the retries and timeouts of `request.policy`. Events are
 * decoded as they are read, and the end's parts go out with the last event's: an answer's last words
 * and its finish reach the answer loop together.
 */
export const stream = <A>(request: Request, decoder: Decoder<A>): Stream.Stream<A, LanguageModelError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const url = yield* Effect.try({
      try: () => new URL(request.url),
      catch: () =>
        new LanguageModelError({ reason: "invalid_request", message: `${request.provider}: bad URL ${request.url}` })
    })
    const host = url.host
    const body = JSON.stringify(request.body)
    // The current span's W3C trace context, so the provider's own traces join the answer's (only a
    // real span's: an untraced process has none to pass).
    const traceparent = yield* Traced.traceparent
    const headers = {
      "content-type": "application/json",
      accept: "text/event-stream",
      ...(traceparent === undefined ? {} : { traceparent }),
      ...request.headers
    }

    // One request on Node's own HTTP client rather than `fetch`: `fetch` kept the event loop about
    // 0.6 ms longer after each request, so the server was often still busy when the provider's first
    // token came, and read it through web streams (`pnpm bench:chat`: first text 0.3–0.5 ms sooner).
    // The first-byte timeout is a timer of the request, cleared by its headers; an interruption
    // destroys the request, which closes the provider's connection.
    const firstByteMillis = Duration.toMillis(request.policy.firstByteTimeout)
    const attempt = Effect.async<NodeHttp.IncomingMessage, Failure>((resume) => {
      let settled = false
      // Called from the request's events only, which come after the timer is set.
      const settle = (effect: Effect.Effect<NodeHttp.IncomingMessage, Failure>) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(effect)
      }
      const secure = url.protocol === "https:"
      let outgoing: NodeHttp.ClientRequest
      try {
        outgoing = (secure ? NodeHttps : NodeHttp).request(url, {
          method: "POST",
          agent: secure ? httpsAgent : httpAgent,
          headers
        }, (response) => settle(Effect.succeed(response)))
      } catch (cause) {
        // A header Node refuses (a key with a line break in it): no request can be made.
        return resume(Effect.fail(fail(
          "invalid_request",
          `${request.provider}: cannot send the request: ${cause instanceof Error ? cause.message : String(cause)}`
        )))
      }
      const timer = setTimeout(() => {
        settle(Effect.fail(fail(
          "unavailable",
          `${request.provider}: no answer from ${host} within ${Duration.format(request.policy.firstByteTimeout)}`
        )))
        outgoing.destroy()
      }, firstByteMillis)
      outgoing.on(
        "error",
        (cause) =>
          settle(Effect.fail(fail("unavailable", `${request.provider}: cannot reach ${host}: ${cause.message}`)))
      )
      outgoing.end(body)
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
        outgoing.destroy()
      })
    }).pipe(
      Effect.flatMap((response) => {
        const status = response.statusCode ?? 0
        if (status >= 200 && status < 300) return Effect.succeed(response)
        return Effect.flatMap(textOf(response), (text) =>
          Effect.fail(fail(
            reasonOf(status),
            `${request.provider}: ${status} ${describe(text)}`.trim(),
            retryAfterMillis(headerOf(response, "retry-after"), Date.now())
          )))
      })
    )

    // Full jitter over an exponential ceiling (the delay `Schedule.exponential` gives), capped, and
    // never sooner than the provider asked; only retryable failures, `maxRetries` times.
    const maxDelay = Duration.toMillis(request.policy.maxDelay)
    const retry = Schedule.exponential(request.policy.baseDelay).pipe(
      Schedule.intersect(Schedule.recurs(request.policy.maxRetries)),
      Schedule.intersect(Schedule.identity<Failure>()),
      Schedule.whileInput((failure: Failure) => failure.error.retryable),
      Schedule.modifyDelayEffect(([, failure], ceiling) =>
        Effect.gen(function*() {
          const jittered = (yield* Random.next) * Duration.toMillis(ceiling)
          const wait = Math.min(maxDelay, Math.max(jittered, failure.retryAfterMillis ?? 0))
          yield* Effect.logDebug(`${request.provider}: retrying in ${Math.round(wait)} ms`).pipe(
            Effect.annotateLogs({ reason: failure.error.reason })
          )
          return Duration.millis(wait)
        })
      )
    )
    const open = attempt.pipe(Effect.retry(retry), Effect.mapError((failure) => failure.error))

    const response = yield* open

    // The body is read as it comes (events are decoded on arrival), and each pull takes what has been
    // decoded, or waits for the next parts: a single source instead of a pipeline of stream stages,
    // because every token of an answer passes through here, and the end of the answer waits on what
    // follows its last event.
    const text = new TextDecoder()
    const pending: Array<A> = []
    // An event that failed to decode, or a broken body: the generation fails with it.
    let failure: LanguageModelError | undefined
    // The body has ended, or the event that ends the answer (`request.until`) has arrived.
    let ended = false
    let bodyEnded = false
    // The end's parts have been handed on: the next pull ends the stream.
    let finished = false
    const parser = createParser({
      onEvent: (event) => {
        if (ended || failure !== undefined) return
        const parsed: Event = event.event === undefined
          ? { data: event.data }
          : { event: event.event, data: event.data }
        if (request.until?.(parsed) === true) {
          ended = true
          return
        }
        Either.match(Either.flatMap(json(request.provider, parsed), decoder.event), {
          onLeft: (error) => {
            failure = error
          },
          onRight: (parts) => {
            pending.push(...parts)
          }
        })
      }
    })
    // The pull waiting for parts, and what it does at each chunk (the idle timer is armed again).
    let waiting: (() => void) | undefined
    response.on("data", (bytes: Uint8Array) => {
      if (!ended) parser.feed(text.decode(bytes, { stream: true }))
      if (waiting !== undefined) waiting()
      // Nobody is reading: past a backlog, the provider waits (TCP's backpressure) until a pull.
      else if (pending.length > maxBacklog) response.pause()
    })
    response.on("end", () => {
      bodyEnded = true
      if (!ended) {
        ended = true
        parser.feed(text.decode())
      }
      waiting?.()
    })
    // A connection that breaks before the body's end (`end` comes first when it does not).
    response.on("close", () => {
      if (bodyEnded || failure !== undefined) return
      if (!ended) {
        failure = new LanguageModelError({
          reason: "unavailable",
          message: `${request.provider}: the stream broke: ${response.errored?.message ?? "the connection closed"}`
        })
      }
      waiting?.()
    })
    response.on("error", () => undefined)

    // Closing the stream before the body's end (a failure, an interruption) closes the provider's
    // connection. After the answer's last event the provider ends the body itself: the rest is read
    // instead, so the connection goes back to the pool, and only a body that goes on is destroyed.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        waiting = undefined
        if (bodyEnded) return
        // Destroying a response that has not ended closes its connection.
        if (!ended) return void response.destroy()
        const guard = setTimeout(() => response.destroy(), 1_000)
        response.once("close", () => clearTimeout(guard))
        response.resume()
      })
    )
    const idleMillis = Duration.toMillis(request.policy.idleTimeout)
    const next = Effect.async<Chunk.Chunk<A>, Option.Option<LanguageModelError>>((resume) => {
      let settled = false
      const settle = (effect: Effect.Effect<Chunk.Chunk<A>, Option.Option<LanguageModelError>>) => {
        if (settled) return
        settled = true
        waiting = undefined
        clearTimeout(timer)
        resume(effect)
      }
      // Armed again at every chunk: events that give no parts (pings, a model thinking) still count.
      const arm = () =>
        setTimeout(() =>
          settle(Effect.fail(Option.some(
            new LanguageModelError({
              reason: "unavailable",
              message: `${request.provider}: the stream stalled for ${Duration.format(request.policy.idleTimeout)}`
            })
          ))), idleMillis)
      let timer: ReturnType<typeof setTimeout> | undefined
      // What has been decoded so far settles the pull; otherwise it waits for the next chunk.
      const look = () => {
        if (failure !== undefined) return settle(Effect.fail(Option.some(failure)))
        if (ended && !finished) {
          finished = true
          pending.push(...decoder.end())
        }
        if (pending.length > 0) return settle(Effect.succeed(Chunk.unsafeFromArray(pending.splice(0, pending.length))))
        if (finished) return settle(Effect.fail(Option.none()))
        clearTimeout(timer)
        timer = arm()
      }
      waiting = look
      look()
      if (!settled && response.isPaused()) response.resume()
      // Interrupted: the finalizer closes the connection.
      return Effect.sync(() => {
        settled = true
        waiting = undefined
        clearTimeout(timer)
      })
    })
    return Stream.repeatEffectChunkOption(next)
  }))

// The parts decoded ahead of the reader before the body is paused.
const maxBacklog = 1_024

// Connections are kept open between requests, as `fetch` kept them.
const httpAgent = new NodeHttp.Agent({ keepAlive: true })
const httpsAgent = new NodeHttps.Agent({ keepAlive: true })

// A response header's value (the first, when repeated), or null.
const headerOf = (response: NodeHttp.IncomingMessage, name: string): string | null => {
  const value = response.headers[name]
  return value === undefined ? null : Array.isArray(value) ? value[0] ?? null : value
}

// An error response's body, as text ("" when it cannot be read).
const textOf = (response: NodeHttp.IncomingMessage): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const chunks: Array<Buffer> = []
    response.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    response.on("error", () => resume(Effect.succeed("")))
    return Effect.sync(() => response.destroy())
  })

// An event's JSON data; a malformed event fails the generation.
const json = (provider: string, event: Event): Either.Either<any, LanguageModelError> =>
  Either.try({
    try: () => JSON.parse(event.data),
    catch: () =>
      new LanguageModelError({
        reason: "unavailable",
        message: `${provider}: malformed event: ${event.data.slice(0, 200)}`
      })
  })

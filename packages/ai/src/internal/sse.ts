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
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import { createParser } from "eventsource-parser"

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
    const controller = new AbortController()
    const host = (() => {
      try {
        return new URL(request.url).host
      } catch {
        return request.url
      }
    })()

    // The first-byte timeout is a timer of the request itself, cleared by its headers, not an
    // effect raced against it: the race's fiber and its interruption cost the first token about
    // 0.2 ms (`pnpm bench:chat`). It aborts with this reason, which `catch` tells from the others.
    const firstByteMillis = Duration.toMillis(request.policy.firstByteTimeout)
    const silent = new Error("no first byte")
    const attempt = Effect.tryPromise({
      try: (signal) => {
        const firstByte = new AbortController()
        const timer = setTimeout(() => firstByte.abort(silent), firstByteMillis)
        return fetch(request.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "text/event-stream", ...request.headers },
          body: JSON.stringify(request.body),
          signal: AbortSignal.any([signal, controller.signal, firstByte.signal])
        }).finally(() => clearTimeout(timer))
      },
      catch: (cause) =>
        cause === silent
          ? fail(
            "unavailable",
            `${request.provider}: no answer from ${host} within ${Duration.format(request.policy.firstByteTimeout)}`
          )
          : fail(
            "unavailable",
            `${request.provider}: cannot reach ${host}: ${
              cause instanceof Error ? (cause.cause as Error | undefined)?.message ?? cause.message : String(cause)
            }`
          )
    }).pipe(
      Effect.flatMap((response) =>
        response.ok
          ? Effect.succeed(response)
          : Effect.flatMap(
            Effect.promise(() => response.text().catch(() => "")),
            (body) =>
              Effect.fail(fail(
                reasonOf(response.status),
                `${request.provider}: ${response.status} ${describe(body)}`.trim(),
                retryAfterMillis(response.headers.get("retry-after"), Date.now())
              ))
          )
      )
    )

    const maxDelay = Duration.toMillis(request.policy.maxDelay)
    const open = (retry: number): Effect.Effect<Response, LanguageModelError> =>
      Effect.catchAll(attempt, (failure) => {
        if (!failure.error.retryable || retry >= request.policy.maxRetries) return Effect.fail(failure.error)
        return Effect.gen(function*() {
          // Full jitter over an exponential ceiling; never sooner than the provider asked.
          const ceiling = Duration.toMillis(request.policy.baseDelay) * 2 ** retry
          const jittered = (yield* Random.next) * ceiling
          const wait = Math.min(maxDelay, Math.max(jittered, failure.retryAfterMillis ?? 0))
          yield* Effect.logDebug(`${request.provider}: retrying in ${Math.round(wait)} ms`).pipe(
            Effect.annotateLogs({ reason: failure.error.reason })
          )
          yield* Effect.sleep(Duration.millis(wait))
          return yield* open(retry + 1)
        })
      })

    const response = yield* open(0)
    const body = response.body
    if (body === null) {
      return Stream.fail(
        new LanguageModelError({ reason: "unavailable", message: `${request.provider}: empty response` })
      )
    }

    // One pull reads until an event has given parts (or the body ends), with the idle timeout on
    // each read: a single source instead of a pipeline of stream stages, because every token of an
    // answer passes through here, and the end of the answer waits on what follows its last event.
    const reader = body.getReader()
    const text = new TextDecoder()
    const pending: Array<A> = []
    // An event that failed to decode: the generation fails with it.
    let failure: LanguageModelError | undefined
    // The body has ended, or the event that ends the answer (`request.until`) has arrived.
    let ended = false
    let bodyEnded = false
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
    // Closing the stream before the body's end (a failure, an interruption) closes the provider's
    // connection. After the answer's last event the provider ends the body itself: the rest is read
    // instead (an abort builds a DOMException and tears down the fetch's streams, tenths of a
    // millisecond the answer's `done` would wait on), and only a body that goes on is aborted.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (bodyEnded) return
        if (!ended) return controller.abort()
        const guard = setTimeout(() => controller.abort(), 1_000)
        const rest = (): void => {
          reader.read().then(({ done }) => done ? clearTimeout(guard) : rest(), () => clearTimeout(guard))
        }
        rest()
      })
    )
    const idleMillis = Duration.toMillis(request.policy.idleTimeout)
    // The end's parts have been handed on: the next pull ends the stream.
    let finished = false
    const next = Effect.async<Chunk.Chunk<A>, Option.Option<LanguageModelError>>((resume) => {
      if (finished) return resume(Effect.fail(Option.none()))
      let settled = false
      const settle = (effect: Effect.Effect<Chunk.Chunk<A>, Option.Option<LanguageModelError>>) => {
        if (settled) return
        settled = true
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
      let timer = arm()
      const read = (): void => {
        reader.read().then(({ done, value }) => {
          if (settled) return
          if (done) {
            bodyEnded = true
            ended = true
            parser.feed(text.decode())
          } else {
            parser.feed(text.decode(value, { stream: true }))
          }
          if (failure !== undefined) return settle(Effect.fail(Option.some(failure)))
          if (ended) {
            finished = true
            pending.push(...decoder.end())
          } else if (pending.length === 0) {
            clearTimeout(timer)
            timer = arm()
            return read()
          }
          settle(
            pending.length === 0
              ? Effect.fail(Option.none())
              : Effect.succeed(Chunk.unsafeFromArray(pending.splice(0, pending.length)))
          )
        }, (cause) =>
          settle(Effect.fail(Option.some(
            new LanguageModelError({
              reason: "unavailable",
              message: `${request.provider}: the stream broke: ${
                cause instanceof Error ? cause.message : String(cause)
              }`
            })
          ))))
      }
      read()
      // Interrupted: the pending read is left to the abort of the finalizer.
      return Effect.sync(() => {
        settled = true
        clearTimeout(timer)
      })
    })
    return Stream.repeatEffectChunkOption(next)
  }))

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

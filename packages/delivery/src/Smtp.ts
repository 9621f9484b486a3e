/**
 * E-mail over SMTP with nodemailer, for `Transport`: each report goes to each address as its own
 * message (so one refused recipient never stops the others, and no recipient sees the others'
 * addresses), with an HTML part, a text part and the charts inline as `cid:` PNGs.
 *
 * A send that fails for a reason that can pass (a 4xx reply, a dropped connection, a timeout) is
 * retried with exponential backoff and jitter; a permanent refusal (5xx) is not.
 *
 * @since 0.1.0
 */
import type * as Delivery from "@sightline/core/Delivery"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"

/**
 * Options of the transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `smtp://user:pass@host:port` or `smtps://…` (`SIGHTLINE_SMTP_URL`); it holds a password, so it is redacted. */
  readonly url: Redacted.Redacted<string>
  /** The `From` of every message (`SIGHTLINE_MAIL_FROM`). */
  readonly from: string
  /** Attempts per recipient (default 3). */
  readonly attempts?: number | undefined
  /** The first backoff (default 500 ms); it doubles, with jitter. */
  readonly backoffMillis?: number | undefined
  /** Connection, greeting and socket timeouts (default 15 s). */
  readonly timeoutMillis?: number | undefined
}

/** A send that failed, and whether trying again could help. */
interface SendError {
  readonly reason: string
  readonly transient: boolean
}

const transientCodes = new Set(["ECONNECTION", "ETIMEDOUT", "ESOCKET", "ECONNRESET", "ECONNREFUSED", "EDNS"])

const sendError = (error: unknown): SendError => {
  const e = error as { responseCode?: number; code?: string; response?: string; message?: string }
  if (typeof e.responseCode === "number") {
    // The server's reply, without the echo of the whole conversation some servers add.
    const reply = (e.response ?? e.message ?? "").split("\n")[0]!.slice(0, 300)
    return { reason: `the mail server refused it: ${reply}`, transient: e.responseCode >= 400 && e.responseCode < 500 }
  }
  return {
    reason: `the mail server could not be reached: ${(e.message ?? String(error)).slice(0, 300)}`,
    transient: e.code === undefined || transientCodes.has(e.code)
  }
}

// Header values may not carry line breaks (a subject written by a model must not add headers).
const oneLine = (text: string) => text.replace(/[\r\n]+/g, " ").trim()

/**
 * Sends one request to one address, retrying what can pass; fails with a reason safe to show.
 * Scoped: the transport closes with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSender = (options: Options) =>
  Effect.gen(function*() {
    const timeout = options.timeoutMillis ?? 15_000
    // Imported here, not at start: only a server configured with SMTP needs nodemailer.
    const { default: nodemailer } = yield* Effect.promise(() => import("nodemailer"))
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          url: Redacted.value(options.url),
          connectionTimeout: timeout,
          greetingTimeout: timeout,
          socketTimeout: timeout
        })
      ),
      (t) => Effect.sync(() => t.close())
    )
    const retry = Schedule.exponential(Duration.millis(options.backoffMillis ?? 500)).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(Math.max(0, (options.attempts ?? 3) - 1)))
    )
    return (request: Delivery.DeliveryRequest, address: string): Effect.Effect<void, string> =>
      Effect.tryPromise({
        // nodemailer cannot abort a send: an interrupted delivery stops waiting and the socket times out.
        try: () =>
          transport.sendMail({
            from: options.from,
            to: address,
            subject: oneLine(request.subject),
            text: request.text,
            html: request.html,
            attachments: (request.images ?? []).map((image) => ({
              filename: image.filename,
              content: Buffer.from(image.bytes),
              contentType: image.mimeType,
              cid: image.cid,
              contentDisposition: "inline" as const
            }))
          }),
        catch: sendError
      }).pipe(
        Effect.retry({ schedule: retry, while: (error) => error.transient }),
        Effect.asVoid,
        Effect.mapError((error) => error.reason)
      )
  })

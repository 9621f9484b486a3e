/**
 * The Connect protocol (unary, JSON codec) as Sightline serves it: the header checks, the error body
 * `{code, message, details}` with its HTTP status, and one function that turns a procedure (schemas
 * plus a use case) into a route handler that never fails, so no other error format reaches the wire.
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Errors from "@sightline/core/Errors"
import type * as Policy from "@sightline/core/Policy"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { isBodyTooLarge, maxBodyBytes } from "./bodyLimit.js"
import * as InputGuard from "./inputGuard.js"
import * as Issues from "./issues.js"

/** The Connect error codes. */
export type Code =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated"

/** The HTTP status of each code (api-surface "Connect error codes → HTTP", which is Connect's own table). */
export const httpStatus: { readonly [K in Code]: number } = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401
}

/** A Connect error on its way to the wire; `status` overrides the table for protocol-level answers. */
export class ConnectError extends Data.TaggedError("ConnectError")<{
  readonly code: Code
  readonly message: string
  readonly status?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}> {}

/** The Connect error body (`details` is always present, and empty: nothing internal is attached). */
export const errorResponse = (error: ConnectError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(
    { code: error.code, message: error.message, details: [] },
    { status: error.status ?? httpStatus[error.code], headers: error.headers ?? {} }
  )

/**
 * The Connect code of a core error. `Conflict` is `aborted` (409, the status /v2 gives it): a stale
 * ref or a state that moved under the caller is worth re-reading and retrying.
 */
export const fromApiError = (error: Errors.ApiError): ConnectError => {
  switch (error._tag) {
    case "InvalidRequest":
      return new ConnectError({ code: "invalid_argument", message: error.message })
    case "Unauthenticated":
      return new ConnectError({ code: "unauthenticated", message: error.message })
    case "PermissionDenied":
      return new ConnectError({ code: "permission_denied", message: error.message })
    case "NotFound":
      return new ConnectError({ code: "not_found", message: error.message })
    case "Conflict":
      return new ConnectError({ code: "aborted", message: error.message })
    case "RateLimitExceeded":
      return new ConnectError({ code: "resource_exhausted", message: error.message })
    case "Timeout":
      return new ConnectError({ code: "deadline_exceeded", message: error.message })
    case "Cancelled":
      return new ConnectError({ code: "canceled", message: error.message })
    case "ExecutionFailed":
    case "NoReport":
      return new ConnectError({ code: "failed_precondition", message: error.message })
    case "Internal":
      // Core's internal message is meant for clients already, but the rule is simpler kept whole.
      return new ConnectError({ code: "internal", message: "Internal server error" })
  }
}

const invalid = (message: string) => new ConnectError({ code: "invalid_argument", message })

const timeoutPattern = /^[0-9]{1,10}$/

/**
 * The protocol checks of a unary request: `Connect-Protocol-Version: 1`, a JSON content type, no
 * compression, and a well-formed `Connect-Timeout-Ms` (returned, when sent).
 */
export const checkHeaders = (
  headers: Readonly<Record<string, string | undefined>>
): Effect.Effect<Option.Option<Duration.Duration>, ConnectError> =>
  Effect.gen(function*() {
    const version = headers["connect-protocol-version"]
    if (version === undefined) {
      return yield* invalid("missing required header: set Connect-Protocol-Version to \"1\"")
    }
    if (version.trim() !== "1") {
      return yield* invalid(`unsupported Connect-Protocol-Version "${version}": only "1" is supported`)
    }
    const contentType = headers["content-type"]
    if (!isJson(contentType)) {
      // Connect answers an unsupported codec with 415 and names the accepted ones.
      return yield* new ConnectError({
        code: "invalid_argument",
        message: `unsupported content type ${
          contentType === undefined ? "(none)" : `"${contentType}"`
        }: only application/json is accepted`,
        status: 415,
        headers: { "accept-post": "application/json" }
      })
    }
    const encoding = headers["content-encoding"]
    if (encoding !== undefined && encoding.trim().toLowerCase() !== "identity") {
      return yield* new ConnectError({
        code: "unimplemented",
        message: `unsupported Content-Encoding "${encoding}": only identity is supported`
      })
    }
    const timeout = headers["connect-timeout-ms"]
    if (timeout === undefined) return Option.none()
    const millis = timeoutPattern.test(timeout) ? Number(timeout) : 0
    if (millis <= 0) {
      return yield* invalid(
        `invalid Connect-Timeout-Ms "${timeout}": a positive integer of at most 10 digits is required`
      )
    }
    return Option.some(Duration.millis(millis))
  })

const isJson = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const [mediaType, ...parameters] = contentType.split(";").map((part) => part.trim().toLowerCase())
  if (mediaType !== "application/json") return false
  return parameters.every((parameter) => !parameter.startsWith("charset=") || /^charset="?utf-8"?$/.test(parameter))
}

const tooLarge = () => invalid(`request body too large: at most ${maxBodyBytes} bytes`)

/** Reads the body as JSON: an empty body is the empty message `{}`; anything unreadable is `invalid_argument`. */
export const readJson = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<unknown, ConnectError> =>
  Effect.gen(function*() {
    const length = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(length) && length > maxBodyBytes) return yield* tooLarge()
    // Read in a fiber of its own: interrupting the read (at the deadline) would destroy the request
    // stream, and the socket with it, so the deadline answer would never be sent.
    const reading = yield* Effect.forkDaemon(
      request.text.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
    )
    const text = yield* Fiber.join(reading).pipe(
      Effect.mapError((error) => isBodyTooLarge(error) ? tooLarge() : invalid("unreadable request body"))
    )
    if (text.trim() === "") return {}
    const problem = InputGuard.jsonProblem(text)
    if (problem !== undefined) return yield* invalid(problem)
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => invalid("malformed JSON in the request body")
    })
    // A Connect message is a JSON object, even an empty one: `1`, `[]` or `"x"` is not a message.
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return yield* invalid("the request message must be a JSON object")
    }
    return parsed
  })

const issuesMessage = (error: ParseResult.ParseError): string =>
  Issues.describe("invalid request", ParseResult.ArrayFormatter.formatErrorSync(error), "the message is not valid")

/** A unary procedure: how the caller is identified, the message schemas and the use case. */
export interface Procedure<I, IE, O, OE, R> {
  /** `package.Service/Method` (or the path, for the webhook): names the procedure in logs and spans. */
  readonly name: string
  /** The credential of the request, or `None` when it carries none. */
  readonly credential: (headers: Readonly<Record<string, string | undefined>>) => Option.Option<string>
  /** What a request without a credential is told. */
  readonly missingCredential: string
  readonly request: Schema.Schema<I, IE>
  readonly response: Schema.Schema<O, OE>
  readonly handle: (principal: Policy.Principal, request: I) => Effect.Effect<O, Errors.ApiError, R>
}

/** How a procedure authenticates and rate-limits its caller (core errors and wire errors alike). */
export type Authenticate<R> = (token: string) => Effect.Effect<Policy.Principal, ConnectError, R>

/**
 * The route handler of a unary procedure. It never fails: every outcome, including defects and the
 * deadline, is a Connect response. The deadline covers reading the body, authentication and the use
 * case, which is interrupted when it passes (a transaction in flight rolls back).
 */
export const unary = <I, IE, O, OE, R, RA>(
  procedure: Procedure<I, IE, O, OE, R>,
  authenticate: Authenticate<RA>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | RA | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method !== "POST") {
      return yield* new ConnectError({
        code: "unimplemented",
        message: `${request.method} is not supported: Connect operations are POST`,
        status: 405,
        headers: { allow: "POST" }
      })
    }
    const deadline = yield* checkHeaders(request.headers)
    const run = Effect.gen(function*() {
      const token = procedure.credential(request.headers)
      if (Option.isNone(token)) {
        return yield* new ConnectError({ code: "unauthenticated", message: procedure.missingCredential })
      }
      const principal = yield* authenticate(token.value)
      const json = yield* readJson(request)
      const input = yield* Schema.decodeUnknown(procedure.request, { errors: "all" })(json).pipe(
        Effect.mapError((error) => invalid(issuesMessage(error)))
      )
      const output = yield* procedure.handle(principal, input).pipe(Effect.mapError(fromApiError))
      // Our own response failing its schema is a bug, not the caller's problem.
      const encoded = yield* Effect.orDie(Schema.encode(procedure.response)(output))
      return HttpServerResponse.unsafeJson(encoded)
    })
    return yield* Option.match(deadline, {
      onNone: () => run,
      onSome: (duration) =>
        Effect.timeoutFail(run, {
          duration,
          onTimeout: () =>
            new ConnectError({
              code: "deadline_exceeded",
              message: `the deadline of ${Duration.toMillis(duration)} ms passed before the operation finished`
            })
        })
    })
  }).pipe(
    Effect.catchAll((error) => Effect.succeed(errorResponse(error))),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError("connect: unexpected failure", cause).pipe(
          Effect.annotateLogs({ procedure: procedure.name }),
          Effect.as(errorResponse(new ConnectError({ code: "internal", message: "Internal server error" })))
        )
    ),
    Effect.withSpan(`Connect ${procedure.name}`)
  )

/** The path of the current request, without the query string. */
export const currentPath: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => new URL(request.url, "http://localhost").pathname
)

/** The answer to a path under a Connect prefix that names no procedure. */
export const unknownProcedure: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest
> = Effect.map(
  currentPath,
  (path) => errorResponse(new ConnectError({ code: "unimplemented", message: `no procedure at ${path}` }))
)

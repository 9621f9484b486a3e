/**
 * The `{ error: { code, message } }` envelope of /v2, one schema class per status.
 *
 * Core's errors are `Schema.TaggedError`s without statuses; this module is the one place that knows
 * the HTTP status of each code. Each wire error is a plain `Schema.Class` with a literal `code`, so the
 * JSON carries exactly the envelope (a `TaggedError` would add `_tag`).
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Errors from "@sightline/core/Errors"
import * as Schema from "effect/Schema"

const envelope = <const Code extends Errors.ErrorCode>(code: Code) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String
    })
  })

/**
 * 400 `invalid_request`.
 *
 * @since 0.1.0
 * @category models
 */
export class InvalidRequest extends Schema.Class<InvalidRequest>("InvalidRequestError")(
  envelope("invalid_request").fields,
  HttpApiSchema.annotations({ status: 400, description: "Malformed request or missing required fields" })
) {}

/**
 * 401 `unauthenticated`.
 *
 * @since 0.1.0
 * @category models
 */
export class Unauthenticated extends Schema.Class<Unauthenticated>("UnauthenticatedError")(
  envelope("unauthenticated").fields,
  HttpApiSchema.annotations({ status: 401, description: "Missing or invalid Bearer token" })
) {}

/**
 * 403 `permission_denied`.
 *
 * @since 0.1.0
 * @category models
 */
export class PermissionDenied extends Schema.Class<PermissionDenied>("PermissionDeniedError")(
  envelope("permission_denied").fields,
  HttpApiSchema.annotations({ status: 403, description: "Insufficient permissions" })
) {}

/**
 * 404 `not_found`.
 *
 * @since 0.1.0
 * @category models
 */
export class NotFound extends Schema.Class<NotFound>("NotFoundError")(
  envelope("not_found").fields,
  HttpApiSchema.annotations({ status: 404, description: "Resource not found (or hidden by permissions)" })
) {}

/**
 * 409 `conflict`.
 *
 * @since 0.1.0
 * @category models
 */
export class Conflict extends Schema.Class<Conflict>("ConflictError")(
  envelope("conflict").fields,
  HttpApiSchema.annotations({ status: 409, description: "Stale expected_git_ref, or a state that forbids the action" })
) {}

/**
 * 413 `invalid_request`: the body is larger than the server accepts.
 *
 * @since 0.1.0
 * @category models
 */
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLargeError")(
  envelope("invalid_request").fields,
  HttpApiSchema.annotations({ status: 413, description: "Request body too large" })
) {}

/**
 * 422 `execution_failed` or `no_report`.
 *
 * @since 0.1.0
 * @category models
 */
export class Unprocessable extends Schema.Class<Unprocessable>("UnprocessableError")(
  Schema.Struct({
    error: Schema.Struct({ code: Schema.Literal("execution_failed", "no_report"), message: Schema.String })
  }).fields,
  HttpApiSchema.annotations({ status: 422, description: "Execution failed, or no report was produced" })
) {}

/**
 * 429 `rate_limit_exceeded` (with `Retry-After` and `RateLimit-*` headers).
 *
 * @since 0.1.0
 * @category models
 */
export class RateLimitExceeded extends Schema.Class<RateLimitExceeded>("RateLimitExceededError")(
  envelope("rate_limit_exceeded").fields,
  HttpApiSchema.annotations({ status: 429, description: "Too many requests for the organization" })
) {}

/**
 * 499 `cancelled`.
 *
 * @since 0.1.0
 * @category models
 */
export class Cancelled extends Schema.Class<Cancelled>("CancelledError")(
  envelope("cancelled").fields,
  HttpApiSchema.annotations({ status: 499, description: "Cancelled" })
) {}

/**
 * 500 `internal`: never carries internal detail.
 *
 * @since 0.1.0
 * @category models
 */
export class Internal extends Schema.Class<Internal>("InternalError")(
  envelope("internal").fields,
  HttpApiSchema.annotations({ status: 500, description: "Internal server error" })
) {}

/**
 * 504 `timeout`.
 *
 * @since 0.1.0
 * @category models
 */
export class Timeout extends Schema.Class<Timeout>("TimeoutError")(
  envelope("timeout").fields,
  HttpApiSchema.annotations({ status: 504, description: "Request timed out" })
) {}

/**
 * Every wire error of /v2.
 *
 * @since 0.1.0
 * @category models
 */
export type HttpError =
  | InvalidRequest
  | Unauthenticated
  | PermissionDenied
  | NotFound
  | Conflict
  | PayloadTooLarge
  | Unprocessable
  | RateLimitExceeded
  | Cancelled
  | Internal
  | Timeout

/**
 * The wire error classes, for `HttpApi.addError`.
 *
 * @since 0.1.0
 * @category constants
 */
export const all = [
  InvalidRequest,
  Unauthenticated,
  PermissionDenied,
  NotFound,
  Conflict,
  PayloadTooLarge,
  Unprocessable,
  RateLimitExceeded,
  Cancelled,
  Internal,
  Timeout
] as const

/**
 * The wire error of a core error: the status follows the code (`docs/decisions.md` lists them).
 *
 * @since 0.1.0
 * @category utils
 */
export const fromApiError = (error: Errors.ApiError): HttpError => {
  const body = <C extends Errors.ErrorCode>(code: C) => ({ error: { code, message: error.message } })
  switch (error._tag) {
    case "InvalidRequest":
      return new InvalidRequest(body("invalid_request"))
    case "Unauthenticated":
      return new Unauthenticated(body("unauthenticated"))
    case "PermissionDenied":
      return new PermissionDenied(body("permission_denied"))
    case "NotFound":
      return new NotFound(body("not_found"))
    case "Conflict":
      return new Conflict(body("conflict"))
    case "RateLimitExceeded":
      return new RateLimitExceeded(body("rate_limit_exceeded"))
    case "Internal":
      // A core `Internal` may carry detail meant for logs; the client only ever gets the default text.
      return new Internal({ error: { code: "internal", message: Errors.defaultMessage.internal } })
    case "Timeout":
      return new Timeout(body("timeout"))
    case "Cancelled":
      return new Cancelled(body("cancelled"))
    case "ExecutionFailed":
      return new Unprocessable(body("execution_failed"))
    case "NoReport":
      return new Unprocessable(body("no_report"))
  }
}

/**
 * Builds a wire error from a code and a message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (code: Errors.ErrorCode, message: string = Errors.defaultMessage[code]): HttpError =>
  fromApiError(Errors.fromCode(code, message))

/**
 * The status of each wire error class (for the Connect surfaces and logs).
 *
 * @since 0.1.0
 * @category utils
 */
export const statusOf = (error: HttpError): number => {
  if (error instanceof InvalidRequest) return 400
  if (error instanceof Unauthenticated) return 401
  if (error instanceof PermissionDenied) return 403
  if (error instanceof NotFound) return 404
  if (error instanceof Conflict) return 409
  if (error instanceof PayloadTooLarge) return 413
  if (error instanceof Unprocessable) return 422
  if (error instanceof RateLimitExceeded) return 429
  if (error instanceof Cancelled) return 499
  if (error instanceof Timeout) return 504
  return 500
}

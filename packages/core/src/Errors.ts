/**
 * The error codes of the v2 API, one tagged error per code of the seed's enumeration.
 *
 * Core never knows HTTP statuses: the http package maps each `_tag` to a status and the
 * `{ error: { code, message } }` envelope. Every error carries a human-readable `message`; the
 * constructors default it to the seed's text when nothing more specific is known.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The seed's enumeration of error codes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorCode = Schema.Literal(
  "invalid_request",
  "unauthenticated",
  "permission_denied",
  "not_found",
  "conflict",
  "rate_limit_exceeded",
  "internal",
  "timeout",
  "cancelled",
  "execution_failed",
  "no_report"
)
export type ErrorCode = typeof ErrorCode.Type

/**
 * The seed's default message per code.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMessage: { readonly [K in ErrorCode]: string } = {
  invalid_request: "Invalid request body",
  unauthenticated: "Authentication required",
  permission_denied: "Insufficient permissions",
  not_found: "Resource not found",
  conflict: "Conflict",
  rate_limit_exceeded: "Rate limit exceeded",
  internal: "Internal server error",
  timeout: "Request timed out",
  cancelled: "Cancelled",
  execution_failed: "Execution failed",
  no_report: "No report was produced"
}

const messageField = (code: ErrorCode) => Schema.optionalWith(Schema.String, { default: () => defaultMessage[code] })

/**
 * Malformed request or missing required fields (also `model` with `chat_id`, an invalid playbook run).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: messageField("invalid_request")
}) {
  readonly code = "invalid_request" as const
}

/**
 * Missing or invalid credentials.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: messageField("unauthenticated")
}) {
  readonly code = "unauthenticated" as const
}

/**
 * The caller is known but lacks the rights (including a model that is not permitted).
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  message: messageField("permission_denied")
}) {
  readonly code = "permission_denied" as const
}

/**
 * The resource does not exist, belongs to another organization, or is hidden by permissions.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: messageField("not_found")
}) {
  readonly code = "not_found" as const
}

/**
 * A stale `expected_git_ref`, an illegal state transition, or a uniqueness clash.
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: messageField("conflict")
}) {
  readonly code = "conflict" as const
}

/**
 * Too many requests for the organization. `retryAfterMillis` tells when a token is available.
 *
 * @since 0.1.0
 * @category errors
 */
export class RateLimitExceeded extends Schema.TaggedError<RateLimitExceeded>()("RateLimitExceeded", {
  message: messageField("rate_limit_exceeded"),
  retryAfterMillis: Schema.optionalWith(Schema.Number, { default: () => 1000 })
}) {
  readonly code = "rate_limit_exceeded" as const
}

/**
 * An unexpected failure. The message shown to clients never carries internal detail.
 *
 * @since 0.1.0
 * @category errors
 */
export class Internal extends Schema.TaggedError<Internal>()("Internal", {
  message: messageField("internal")
}) {
  readonly code = "internal" as const
}

/**
 * The operation outlasted its limit.
 *
 * @since 0.1.0
 * @category errors
 */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  message: messageField("timeout")
}) {
  readonly code = "timeout" as const
}

/**
 * The operation was cancelled.
 *
 * @since 0.1.0
 * @category errors
 */
export class Cancelled extends Schema.TaggedError<Cancelled>()("Cancelled", {
  message: messageField("cancelled")
}) {
  readonly code = "cancelled" as const
}

/**
 * Code ran and failed (a sandbox execution, a query).
 *
 * @since 0.1.0
 * @category errors
 */
export class ExecutionFailed extends Schema.TaggedError<ExecutionFailed>()("ExecutionFailed", {
  message: messageField("execution_failed")
}) {
  readonly code = "execution_failed" as const
}

/**
 * A playbook run finished without producing a report.
 *
 * @since 0.1.0
 * @category errors
 */
export class NoReport extends Schema.TaggedError<NoReport>()("NoReport", {
  message: messageField("no_report")
}) {
  readonly code = "no_report" as const
}

/**
 * Every Sightline API error.
 *
 * @since 0.1.0
 * @category models
 */
export type ApiError =
  | InvalidRequest
  | Unauthenticated
  | PermissionDenied
  | NotFound
  | Conflict
  | RateLimitExceeded
  | Internal
  | Timeout
  | Cancelled
  | ExecutionFailed
  | NoReport

/**
 * The schema of every Sightline API error (a union of the tagged errors).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiError = Schema.Union(
  InvalidRequest,
  Unauthenticated,
  PermissionDenied,
  NotFound,
  Conflict,
  RateLimitExceeded,
  Internal,
  Timeout,
  Cancelled,
  ExecutionFailed,
  NoReport
)

/**
 * Builds the error of a code with a message (used where a decision carries only its code).
 *
 * @since 0.1.0
 * @category utils
 */
export const fromCode = (code: ErrorCode, message?: string): ApiError => {
  const props = message === undefined ? {} : { message }
  switch (code) {
    case "invalid_request":
      return new InvalidRequest(props)
    case "unauthenticated":
      return new Unauthenticated(props)
    case "permission_denied":
      return new PermissionDenied(props)
    case "not_found":
      return new NotFound(props)
    case "conflict":
      return new Conflict(props)
    case "rate_limit_exceeded":
      return new RateLimitExceeded(props)
    case "internal":
      return new Internal(props)
    case "timeout":
      return new Timeout(props)
    case "cancelled":
      return new Cancelled(props)
    case "execution_failed":
      return new ExecutionFailed(props)
    case "no_report":
      return new NoReport(props)
  }
}

/**
 * The one limit on request bodies, and the one way to tell that a read hit it.
 *
 * @internal
 */
import type * as HttpServerError from "@effect/platform/HttpServerError"

/** The largest request body accepted (1 MiB): /v2 answers 413 beyond it, Connect `invalid_argument`. */
export const maxBodyBytes = 1024 * 1024

/**
 * Whether a body read failed at `HttpIncomingMessage.withMaxBodySize`. The platform signals it only
 * as the `RequestError` cause `Error("maxBytes exceeded")` (`@effect/platform-node-shared`'s stream
 * reader), with no tag of its own: this is the single place that reads that message.
 */
export const isBodyTooLarge = (error: HttpServerError.RequestError): boolean =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

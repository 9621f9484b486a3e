/**
 * The one limit on request bodies, and the one way to tell that a read hit it.
 *
 * @internal
 */
import type * as HttpServerError from "@effect/platform/HttpServerError"

/** The largest request body accepted (1 MiB): /v2 answers 413 beyond it, Connect `invalid_argument`. */
export const maxBodyBytes = 1024 * 1024

/**
 * The largest body of a files upload (`POST /v2/connectors` as multipart, `POST
 * /v2/connectors/{id}/files`): 1 GiB, streamed to disk
 * part by part, never held in memory. Each file's own limit is the deployment's (`ConnectorFiles`).
 */
export const maxUploadBytes = 1024 ** 3

/** Whether a request uploads files for a connector, and so takes `maxUploadBytes`. */
export const isUpload = (method: string, url: string, contentType: string | undefined): boolean =>
  method === "POST" && /^\/v2\/connectors(\/\d+\/files)?$/.test(url.split("?")[0]!) &&
  (contentType ?? "").toLowerCase().startsWith("multipart/form-data")

/**
 * Whether a body read failed at `HttpIncomingMessage.withMaxBodySize`. The platform signals it only
 * as the `RequestError` cause `Error("maxBytes exceeded")` (`@effect/platform-node-shared`'s stream
 * reader), with no tag of its own: this is the single place that reads that message.
 */
export const isBodyTooLarge = (error: HttpServerError.RequestError): boolean =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

/**
 * What every /v2 handler does around its use case: take the authenticated principal and turn core's
 * tagged errors into the wire envelope. Handlers stay pure translation.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Errors from "@sightline/core/Errors"
import type * as Policy from "@sightline/core/Policy"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import { CurrentPrincipal } from "../Authentication.js"
import * as HttpErrors from "../HttpErrors.js"

/** Runs `f` with the caller; core errors become wire errors. */
export const withPrincipal = <A, E extends Errors.ApiError, R>(
  f: (principal: Policy.Principal) => Effect.Effect<A, E, R>
): Effect.Effect<A, HttpErrors.HttpError, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, f).pipe(Effect.mapError(HttpErrors.fromApiError))

/**
 * The 200 response of a hot read, encoded by `TrustedSchema` from the endpoint's own success
 * schema: the use case made the value from decoded records, so the builder's second pass through
 * `Schema.encode` would only check it again.
 */
export const trustedJson = <A, I, R>(
  schema: Schema.Schema<A, I, R>
): (value: A) => HttpServerResponse.HttpServerResponse => {
  const encode = TrustedSchema.encoder(schema)
  return (value) => HttpServerResponse.unsafeJson(encode(value))
}

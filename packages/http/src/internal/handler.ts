/**
 * What every /v2 handler does around its use case: take the authenticated principal and turn core's
 * tagged errors into the wire envelope. Handlers stay pure translation.
 */
import type * as Errors from "@sightline/core/Errors"
import type * as Policy from "@sightline/core/Policy"
import * as Effect from "effect/Effect"
import { CurrentPrincipal } from "../Authentication.js"
import * as HttpErrors from "../HttpErrors.js"

/** Runs `f` with the caller; core errors become wire errors. */
export const withPrincipal = <A, E extends Errors.ApiError, R>(
  f: (principal: Policy.Principal) => Effect.Effect<A, E, R>
): Effect.Effect<A, HttpErrors.HttpError, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, f).pipe(Effect.mapError(HttpErrors.fromApiError))

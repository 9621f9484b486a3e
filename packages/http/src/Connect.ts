/**
 * The Connect-protocol surfaces: `POST /v1/agents/webhook/trigger` (Bearer) and the public RPC
 * operations under `/rpc/public/…` and without the prefix (`svc_api_key` header).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

/** The Connect routes, registered on the `HttpApiBuilder` router. */
export const layer: Layer.Layer<never> = HttpApiBuilder.Router.use(() => Effect.void)

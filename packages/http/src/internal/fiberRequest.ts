/**
 * The request a fiber serves, read where a per-request middleware runs (`Effect.withFiberRuntime`)
 * rather than looked up with an effect of its own: one runtime step less on every request.
 *
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Context from "effect/Context"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"

/** The request of the fiber that serves it (a middleware's fiber always has one). */
export const requestOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): HttpServerRequest.HttpServerRequest =>
  Context.unsafeGet(fiber.getFiberRef(FiberRef.currentContext), HttpServerRequest.HttpServerRequest)

/**
 * A server on a real socket for tests: the layer that serves it (with `Server.layerServe` and an
 * `HttpServer` listening on loopback) is started in a `ManagedRuntime`, and the test reaches it with
 * `fetch` and with the server's own services. This package's tests and the standalone server's use
 * it, and so can a host's tests of its own deployment.
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Organizations from "@sightline/core/Organizations"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"

/**
 * A new organization with its admin member and an admin API key.
 *
 * @since 0.1.0
 * @category models
 */
export interface Org {
  readonly organizationId: string
  readonly memberId: string
  readonly key: string
}

/**
 * `fetch`'s options, with `key` (the bearer token) and `json` (the body, sent as JSON).
 *
 * @since 0.1.0
 * @category models
 */
export type RequestInit = globalThis.RequestInit & { readonly key?: string; readonly json?: unknown }

/**
 * A running server.
 *
 * @since 0.1.0
 * @category models
 */
export interface TestServer<R> {
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string
  /** Runs an effect against the server's own services (use cases and ports). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, R>) => Promise<A>
  /** A new organization with an admin member and key (as `sightline org create` makes them). */
  readonly newOrg: (name?: string) => Promise<Org>
  /** `fetch` relative to the server. */
  readonly request: (path: string, init?: RequestInit) => Promise<Response>
  /** Stops the server and releases everything its layer acquired. */
  readonly stop: () => Promise<void>
}

/**
 * What the served layer must provide: the listening server, and what `newOrg` uses.
 *
 * @since 0.1.0
 * @category models
 */
export type Needs = HttpServer.HttpServer | Organizations.Organizations | ApiKeys.ApiKeys

/**
 * Starts the server a layer serves. The layer must listen on a TCP address (port 0 picks a free one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = async <R>(layer: Layer.Layer<R | Needs, unknown>): Promise<TestServer<R | Needs>> => {
  const runtime = ManagedRuntime.make(layer)
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") {
    await runtime.dispose()
    throw new Error("the test server must listen on a TCP address")
  }
  const baseUrl = `http://127.0.0.1:${address.port}`
  const run: TestServer<R | Needs>["run"] = (effect) => runtime.runPromise(effect)
  const newOrg = (name = "Acme") =>
    run(Effect.gen(function*() {
      const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.test`
      const { admin, organization } = yield* (yield* Organizations.Organizations).create({ name, adminEmail: email })
      const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "test")
      return { organizationId: organization.id as string, memberId: admin.id as string, key }
    }))
  const request: TestServer<R | Needs>["request"] = (path, init = {}) => {
    const { json, key, ...rest } = init
    const headers = new Headers(rest.headers)
    if (key !== undefined) headers.set("authorization", `Bearer ${key}`)
    if (json !== undefined) headers.set("content-type", "application/json")
    return fetch(`${baseUrl}${path}`, {
      ...rest,
      headers,
      ...(json === undefined ? {} : { body: JSON.stringify(json) })
    })
  }
  return { baseUrl, run, newOrg, request, stop: () => runtime.dispose() }
}

/**
 * The JSON body of a response, typed loosely for assertions; a body that is not JSON throws with
 * the status and the start of the text.
 *
 * @since 0.1.0
 * @category utils
 */
export const body = async (response: Response): Promise<any> => {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`not JSON (${response.status}): ${text.slice(0, 200)}`)
  }
}

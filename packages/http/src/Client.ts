/**
 * The typed client of the /v2 API for hosts and scripts, derived from the same contract the server
 * serves: every operation is a method, requests and responses are decoded with core's schemas, and
 * errors arrive as the wire error classes of `HttpErrors`. Query parameters are given as their decoded
 * type, so parameters with a server-side default are passed explicitly.
 *
 * ```ts
 * const client = yield* Client.make({ baseUrl: "http://127.0.0.1:8787", apiKey })
 * const playbook = yield* client.playbooks.create()
 * ```
 *
 * @since 0.1.0
 */
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientModule from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { SightlineApi } from "./Api.js"

/**
 * Where the server is and how to authenticate.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly baseUrl: string
  /** An API key or a JWT, sent as `Authorization: Bearer`. */
  readonly apiKey: string | Redacted.Redacted<string>
}

/**
 * The client over the `HttpClient` in context (e.g. `FetchHttpClient.layer`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) => {
  const token = typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey)
  return HttpApiClient.make(SightlineApi, {
    baseUrl: options.baseUrl,
    transformClient: HttpClientModule.mapRequest(HttpClientRequest.bearerToken(token))
  })
}

/**
 * The client's type.
 *
 * @since 0.1.0
 * @category models
 */
export type Client = Effect.Effect.Success<ReturnType<typeof make>>

/**
 * Requirements of `make`.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = HttpClient.HttpClient

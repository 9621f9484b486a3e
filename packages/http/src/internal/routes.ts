/**
 * The /v2 routes as data, read off the `HttpApi` (the same source as the OpenAPI document): which
 * methods a path has (for 405 with `Allow`) and which content types an operation accepts (415 for
 * anything else).
 *
 * @internal
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { SightlineApi } from "../Api.js"

interface Route {
  readonly method: string
  readonly pattern: RegExp
  readonly contentTypes: ReadonlySet<string>
}

const patternOf = (path: string): RegExp =>
  new RegExp(
    `^${
      path.split("/").map((
        segment
      ) =>
        segment.startsWith(":")
          ? "[^/]+"
          // A trailing wildcard takes the rest of the path (a file path with its slashes).
          : segment === "*"
          ? ".+"
          : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      ).join("/")
    }/?$`
  )

const routes: ReadonlyArray<Route> = (() => {
  const found: Array<Route> = []
  HttpApi.reflect(SightlineApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, payloads }) => {
      found.push({ method: endpoint.method, pattern: patternOf(endpoint.path), contentTypes: new Set(payloads.keys()) })
    }
  })
  return found
})()

const pathOf = (url: string): string => {
  const question = url.indexOf("?")
  return question < 0 ? url : url.slice(0, question)
}

const methodOrder = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/** The methods the API serves on the path of `url`, in a stable order (empty when the path is unknown). */
export const methodsOf = (url: string): ReadonlyArray<string> => {
  const path = pathOf(url)
  return [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))]
    .sort((a, b) => methodOrder.indexOf(a) - methodOrder.indexOf(b))
}

/** The content types the operation accepts; undefined when the route is unknown (its 404 comes later). */
export const contentTypesOf = (method: string, url: string): ReadonlySet<string> | undefined => {
  const path = pathOf(url)
  return routes.find((route) => route.method === method && route.pattern.test(path))?.contentTypes
}

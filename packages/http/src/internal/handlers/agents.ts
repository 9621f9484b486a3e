import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"

export const layer = HttpApiBuilder.group(SightlineApi, "agents", (handlers) => Effect.succeed(handlers))

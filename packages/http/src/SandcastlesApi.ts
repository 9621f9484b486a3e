/**
 * The Sandcastles group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Sandcastles operations. */
export class SandcastlesApi extends HttpApiGroup.make("sandcastles")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandcastles")
{}

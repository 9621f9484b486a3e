/**
 * The Changes group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Changes operations. */
export class ChangesApi extends HttpApiGroup.make("changes")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Changes")
{}

/**
 * The Roles group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Roles operations. */
export class RolesApi extends HttpApiGroup.make("roles")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Roles")
{}

/**
 * The Members group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Members operations. */
export class MembersApi extends HttpApiGroup.make("members")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Members")
{}

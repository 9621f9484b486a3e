/**
 * The Agents group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Agents operations. */
export class AgentsApi extends HttpApiGroup.make("agents")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Agents")
{}

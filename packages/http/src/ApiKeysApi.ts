/**
 * The API Keys group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The API Keys operations. */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API Keys")
{}

/**
 * The Service accounts group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Service accounts operations. */
export class ServiceAccountsApi extends HttpApiGroup.make("serviceAccounts")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Service accounts")
{}

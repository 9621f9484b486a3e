/**
 * The Connectors group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Connectors operations. */
export class ConnectorsApi extends HttpApiGroup.make("connectors")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Connectors")
{}

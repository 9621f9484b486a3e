/**
 * The Audit logs group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Audit logs operations. */
export class AuditLogsApi extends HttpApiGroup.make("auditLogs")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Audit logs")
{}

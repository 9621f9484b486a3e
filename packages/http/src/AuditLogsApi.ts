/**
 * The Audit logs group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as AuditLog from "@sightline/core/AuditLog"
import { Authentication } from "./Authentication.js"

/** The audit log operation. */
export class AuditLogsApi extends HttpApiGroup.make("auditLogs")
  .add(
    HttpApiEndpoint.get("list", "/v2/audit-logs")
      .setUrlParams(AuditLog.ListAuditLogs)
      .addSuccess(AuditLog.ListAuditLogsResponse)
      .annotate(OpenApi.Summary, "A page of the organization's audit log, newest first (organization:read)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Audit logs")
{}

/**
 * The Audit logs group of /v2: the log, and the model usage summed from it.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as AuditLog from "@sightline/core/AuditLog"
import * as Usage from "@sightline/core/Usage"
import { Authentication } from "./Authentication.js"

/**
 * The audit log operation.
 *
 * @since 0.1.0
 * @category models
 */
export class AuditLogsApi extends HttpApiGroup.make("auditLogs")
  .add(
    HttpApiEndpoint.get("list", "/v2/audit-logs")
      .setUrlParams(AuditLog.ListAuditLogs)
      .addSuccess(AuditLog.ListAuditLogsResponse)
      .annotate(OpenApi.Summary, "A page of the organization's audit log, newest first (organization:read)")
  )
  .add(
    HttpApiEndpoint.get("usage", "/v2/usage")
      .setUrlParams(Usage.UsageParams)
      .addSuccess(Usage.UsageResponse)
      .annotate(OpenApi.Summary, "Model tokens of a period by member, API key or model (organization:read)")
      .annotate(
        OpenApi.Description,
        "Summed from the audit log's model.usage entries, one per answer that called a model. The period is " +
          "[from, to), the 30 days before now by default."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Audit logs")
{}

/**
 * The Settings group of /v2: the organization's settings, read by `organization:read` and changed by
 * `organization:write`.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as OrganizationSettings from "@sightline/core/OrganizationSettings"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The settings operations.
 *
 * @since 0.1.0
 * @category models
 */
export class SettingsApi extends HttpApiGroup.make("settings")
  .add(
    HttpApiEndpoint.get("get", "/v2/organization/settings")
      .addSuccess(OrganizationSettings.OrganizationSettings)
      .annotate(OpenApi.Summary, "The organization's settings (organization:read)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/organization/settings")
      .setPayload(strict(OrganizationSettings.UpdateOrganizationSettings))
      .addSuccess(OrganizationSettings.OrganizationSettings)
      .annotate(OpenApi.Summary, "Change some of the organization's settings (organization:write)")
      .annotate(OpenApi.Description, "Only the settings given change; the answer holds them all. Audited.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Settings")
{}

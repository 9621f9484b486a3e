/**
 * The Service accounts group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { MemberId } from "@sightline/core/Ids"
import * as ServiceAccount from "@sightline/core/ServiceAccount"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The Service accounts operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ServiceAccountsApi extends HttpApiGroup.make("serviceAccounts")
  .add(
    HttpApiEndpoint.post("create", "/v2/service-accounts")
      .setPayload(strict(ServiceAccount.CreateServiceAccount))
      .addSuccess(ServiceAccount.CreateServiceAccountResult, { status: 201 })
      .annotate(OpenApi.Summary, "Create a service account with roles (organization:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/service-accounts")
      .addSuccess(ServiceAccount.ServiceAccountList)
      .annotate(OpenApi.Summary, "List service accounts (organization:read)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/service-accounts/:id")
      .setPath(Schema.Struct({ id: MemberId }))
      .addSuccess(ServiceAccount.DeleteServiceAccountResult)
      .annotate(OpenApi.Summary, "Delete a service account; its keys stop at once (organization:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Service accounts")
{}

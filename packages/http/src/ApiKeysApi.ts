/**
 * The API Keys group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ApiKey from "@sightline/core/ApiKey"
import { ApiKeyId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: ApiKeyId })

/**
 * The API key operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/v2/api-keys")
      .setPayload(strict(ApiKey.CreateApiKey))
      .addSuccess(ApiKey.CreateApiKeyResult, { status: 201 })
      .annotate(OpenApi.Summary, "Mint a role-scoped key; the secret is shown this once")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/api-keys")
      .setUrlParams(ApiKey.ListApiKeys)
      .addSuccess(ApiKey.ListApiKeysResponse)
      .annotate(OpenApi.Summary, "List keys (personal; all or service_accounts need organization:read)")
  )
  .add(
    HttpApiEndpoint.post("rotate", "/v2/api-keys/:id/rotate")
      .setPath(IdPath)
      .addSuccess(ApiKey.RotateApiKeyResult)
      .annotate(OpenApi.Summary, "Revoke a key and mint its replacement with the same scope")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v2/api-keys/:id")
      .setPath(IdPath)
      .addSuccess(ApiKey.RevokeApiKeyResult)
      .annotate(OpenApi.Summary, "Revoke a key")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API Keys")
{}

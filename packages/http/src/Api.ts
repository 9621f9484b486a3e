/**
 * The /v2 contract: one `HttpApiGroup` per tag, built from core's schemas. The OpenAPI document and
 * the typed client (`Client.ts`) derive from it.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgentsApi } from "./AgentsApi.js"
import { ApiKeysApi } from "./ApiKeysApi.js"
import { AssetsApi } from "./AssetsApi.js"
import { AuditLogsApi } from "./AuditLogsApi.js"
import { AuthApi } from "./AuthApi.js"
import { ChangesApi } from "./ChangesApi.js"
import { ChatChannelsApi } from "./ChatChannelsApi.js"
import { ChatsApi } from "./ChatsApi.js"
import { ConnectorsApi } from "./ConnectorsApi.js"
import { DashboardsApi } from "./DashboardsApi.js"
import { EmbedApi } from "./EmbedApi.js"
import { EvalsApi } from "./EvalsApi.js"
import { FeedbackApi } from "./FeedbackApi.js"
import * as HttpErrors from "./HttpErrors.js"
import * as OpenApiDocument from "./internal/openapi.js"
import { MembersApi } from "./MembersApi.js"
import { OAuthApi } from "./OAuthApi.js"
import { PlaybooksApi } from "./PlaybooksApi.js"
import { RolesApi } from "./RolesApi.js"
import { SandcastlesApi } from "./SandcastlesApi.js"
import { SemanticApi } from "./SemanticApi.js"
import { ServiceAccountsApi } from "./ServiceAccountsApi.js"
import { SettingsApi } from "./SettingsApi.js"
import { WebhookEndpointsApi } from "./WebhookEndpointsApi.js"

/**
 * The /v2 API. Every operation may answer any of the envelope errors.
 *
 * @since 0.1.0
 * @category models
 */
export class SightlineApi extends HttpApi.make("sightline")
  .add(ChatsApi)
  .add(ConnectorsApi)
  .add(PlaybooksApi)
  .add(SandcastlesApi)
  .add(ChangesApi)
  .add(ApiKeysApi)
  .add(MembersApi)
  .add(RolesApi)
  .add(ServiceAccountsApi)
  .add(ChatChannelsApi)
  .add(WebhookEndpointsApi)
  .add(AgentsApi)
  .add(EvalsApi)
  .add(FeedbackApi)
  .add(AuditLogsApi)
  .add(SettingsApi)
  .add(EmbedApi)
  .add(OAuthApi)
  .add(SemanticApi)
  .add(DashboardsApi)
  .add(AssetsApi)
  .add(AuthApi)
  .addError(HttpErrors.InvalidRequest)
  .addError(HttpErrors.Unauthenticated)
  .addError(HttpErrors.PermissionDenied)
  .addError(HttpErrors.NotFound)
  .addError(HttpErrors.Conflict)
  .addError(HttpErrors.PayloadTooLarge)
  .addError(HttpErrors.Unprocessable)
  .addError(HttpErrors.RateLimitExceeded)
  .addError(HttpErrors.Cancelled)
  .addError(HttpErrors.Internal)
  .addError(HttpErrors.Timeout)
  .annotate(OpenApi.Title, "Sightline API")
  .annotate(OpenApi.Version, "2.0")
  .annotate(OpenApi.Transform, OpenApiDocument.clean)
  .annotate(
    OpenApi.Description,
    "Analytics chat and automation: chats, playbooks, connectors, semantic queries, sandcastles, library changes, roles and API keys."
  )
{}

/**
 * @sightline/http: Sightline over HTTP, as an `HttpApi` contract, handlers and layers.
 *
 * @since 0.1.0
 */
export * as AgentsApi from "./AgentsApi.js"
export * as Api from "./Api.js"
export * as ApiKeysApi from "./ApiKeysApi.js"
export * as AssetsApi from "./AssetsApi.js"
export * as AssetUrls from "./AssetUrls.js"
export * as AuditLogsApi from "./AuditLogsApi.js"
export * as Authentication from "./Authentication.js"
export * as ChangesApi from "./ChangesApi.js"
export * as ChatChannelsApi from "./ChatChannelsApi.js"
export * as ChatForm from "./ChatForm.js"
export * as ChatsApi from "./ChatsApi.js"
export * as Client from "./Client.js"
export * as Connect from "./Connect.js"
export * as ConnectorsApi from "./ConnectorsApi.js"
export * as HttpErrors from "./HttpErrors.js"
export * as Jwt from "./Jwt.js"
export * as MembersApi from "./MembersApi.js"
export * as PlaybooksApi from "./PlaybooksApi.js"
export * as RateLimit from "./RateLimit.js"
export * as RolesApi from "./RolesApi.js"
export * as SandcastlesApi from "./SandcastlesApi.js"
export * as Server from "./Server.js"
export * as ServiceAccountsApi from "./ServiceAccountsApi.js"

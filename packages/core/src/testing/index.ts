/**
 * `@sightline/core/testing`: the contract test suite of every port, for adapters to prove
 * themselves against, and the fixtures those suites use.
 *
 * @since 0.1.0
 */
export * as AgentRepoContract from "./AgentRepoContract.js"
export * as ApiKeyRepoContract from "./ApiKeyRepoContract.js"
export * as AppRepoContract from "./AppRepoContract.js"
export * as AssetStoreContract from "./AssetStoreContract.js"
export * as AuditLogRepoContract from "./AuditLogRepoContract.js"
export * as ChangeRepoContract from "./ChangeRepoContract.js"
export * as ChatChannelRepoContract from "./ChatChannelRepoContract.js"
export * as ChatRepoContract from "./ChatRepoContract.js"
export * as ConnectorRepoContract from "./ConnectorRepoContract.js"
export * as DeliveryContract from "./DeliveryContract.js"
export * as ExecutionRepoContract from "./ExecutionRepoContract.js"
export * as Fixtures from "./Fixtures.js"
export * as GroupRepoContract from "./GroupRepoContract.js"
export * as JobQueueContract from "./JobQueueContract.js"
export * as LanguageModelContract from "./LanguageModelContract.js"
export * as LibraryStoreContract from "./LibraryStoreContract.js"
export * as MemberRepoContract from "./MemberRepoContract.js"
export * as Memory from "./Memory.js"
export * as OrganizationRepoContract from "./OrganizationRepoContract.js"
export * as PlaybookRepoContract from "./PlaybookRepoContract.js"
export * as RateLimiterContract from "./RateLimiterContract.js"
export * as RoleRepoContract from "./RoleRepoContract.js"
export * as RunnerRepoContract from "./RunnerRepoContract.js"
export * as SandboxRepoContract from "./SandboxRepoContract.js"
export * as SandboxRuntimeContract from "./SandboxRuntimeContract.js"
export * as SessionRepoContract from "./SessionRepoContract.js"
export * as TransactionContract from "./TransactionContract.js"
export * as WebhookEndpointRepoContract from "./WebhookEndpointRepoContract.js"

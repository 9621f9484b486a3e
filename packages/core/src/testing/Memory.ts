/**
 * Every port of core in memory, in one layer: for unit tests of use cases and for host applications
 * that want to try Sightline without a database. Not for production: nothing survives the process.
 *
 * The memory repositories share one `MemoryState`, so a `withTransaction` rolls all of them back
 * together, and the member, role and group repositories share their tables (deleting a role removes
 * its assignments), which is why they must be built in this one layer.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as AgentRepo from "../AgentRepo.js"
import * as ApiKeyRepo from "../ApiKeyRepo.js"
import * as AppRepo from "../AppRepo.js"
import * as AssetStore from "../AssetStore.js"
import * as AuditLogRepo from "../AuditLogRepo.js"
import * as Auditor from "../Auditor.js"
import * as ChangeRepo from "../ChangeRepo.js"
import * as ChatChannelRepo from "../ChatChannelRepo.js"
import * as ChatEventBus from "../ChatEventBus.js"
import * as ChatRepo from "../ChatRepo.js"
import * as ConnectorFiles from "../ConnectorFiles.js"
import * as ConnectorRepo from "../ConnectorRepo.js"
import * as ConnectorTester from "../ConnectorTester.js"
import * as Delivery from "../Delivery.js"
import * as EvalRunRepo from "../EvalRunRepo.js"
import * as EventSender from "../EventSender.js"
import * as ExecutionRepo from "../ExecutionRepo.js"
import * as FeedbackRepo from "../FeedbackRepo.js"
import * as GroupRepo from "../GroupRepo.js"
import * as IdGenerator from "../IdGenerator.js"
import * as JobQueue from "../JobQueue.js"
import * as LibraryStore from "../LibraryStore.js"
import * as MemberRepo from "../MemberRepo.js"
import * as Model from "../Model.js"
import * as OrganizationRepo from "../OrganizationRepo.js"
import * as OutboundEventRepo from "../OutboundEventRepo.js"
import * as OutboundEvents from "../OutboundEvents.js"
import * as PasswordHasher from "../PasswordHasher.js"
import * as PlaybookRepo from "../PlaybookRepo.js"
import * as RateLimiter from "../RateLimiter.js"
import * as RoleRepo from "../RoleRepo.js"
import * as RunnerRepo from "../RunnerRepo.js"
import * as SandboxRepo from "../SandboxRepo.js"
import * as SandboxRuntime from "../SandboxRuntime.js"
import * as Secret from "../Secret.js"
import * as SessionRepo from "../SessionRepo.js"
import * as Transaction from "../Transaction.js"
import * as WebhookEndpointRepo from "../WebhookEndpointRepo.js"

/**
 * Every repository port in memory, sharing one transaction state.
 *
 * @since 0.1.0
 * @category constants
 */
export const repositories = Layer.mergeAll(
  OrganizationRepo.layerMemory,
  MemberRepo.layerMemory,
  RoleRepo.layerMemory,
  GroupRepo.layerMemory,
  ApiKeyRepo.layerMemory,
  AuditLogRepo.layerMemory,
  ChatRepo.layerMemory,
  ConnectorRepo.layerMemory,
  EvalRunRepo.layerMemory,
  FeedbackRepo.layerMemory,
  PlaybookRepo.layerMemory,
  SandboxRepo.layerMemory,
  RunnerRepo.layerMemory,
  ExecutionRepo.layerMemory,
  AgentRepo.layerMemory,
  AppRepo.layerMemory,
  ChatChannelRepo.layerMemory,
  WebhookEndpointRepo.layerMemory,
  OutboundEventRepo.layerMemory,
  ChangeRepo.layerMemory,
  LibraryStore.layerMemory,
  JobQueue.layerMemory,
  AssetStore.layerMemory,
  SessionRepo.layerMemory
).pipe(Layer.provideMerge(Layer.merge(Transaction.layerMemory, IdGenerator.layerTest)))

/** The repositories in memory, with the `Auditor` over them (what every use case records with). */
const repositoriesAudited = Layer.provideMerge(Auditor.layer, repositories)

/**
 * Every port of core in memory: the repositories, deterministic ids and secrets, the test model
 * catalogue, an in-memory rate limiter, the in-process chat event bus, delivery, sandbox runtime and connector tester,
 * and outbound events (what the use cases publish with) over a memory sender. The language model is left out:
 * each test scripts its own with `LanguageModel.layerMemory(script)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = OutboundEvents.layer.pipe(Layer.provideMerge(Layer.mergeAll(
  repositoriesAudited,
  Secret.layerTest,
  PasswordHasher.layerTest,
  Model.layerTest,
  RateLimiter.layerMemory,
  Delivery.layerMemory,
  EventSender.layerMemory,
  SandboxRuntime.layerMemory,
  ConnectorTester.layerMemory,
  ConnectorFiles.layerMemory(),
  ChatEventBus.layer
)))

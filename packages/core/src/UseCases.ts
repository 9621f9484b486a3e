/**
 * Every use case of core in one layer, over the ports an adapter provides: what a host assembles
 * under `@sightline/http`'s server (or calls directly). The use cases that depend on others
 * (changes on the library, the agent loop on chats, everything on `Auth` and `Auditor`) are wired
 * here once.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Agents from "./Agents.js"
import * as Answers from "./Answers.js"
import * as ApiKeys from "./ApiKeys.js"
import * as Apps from "./Apps.js"
import * as AuditLogs from "./AuditLogs.js"
import * as Auditor from "./Auditor.js"
import * as Auth from "./Auth.js"
import * as ChangeChecks from "./ChangeChecks.js"
import * as ChangeEvaluations from "./ChangeEvaluations.js"
import * as Changes from "./Changes.js"
import * as ChatChannels from "./ChatChannels.js"
import * as ChatRuns from "./ChatRuns.js"
import * as Chats from "./Chats.js"
import * as ChatStreams from "./ChatStreams.js"
import * as Connectors from "./Connectors.js"
import * as DashboardChecks from "./DashboardChecks.js"
import * as Dashboards from "./Dashboards.js"
import * as EmbedSessions from "./EmbedSessions.js"
import * as Evals from "./Evals.js"
import * as Feedbacks from "./Feedbacks.js"
import * as IdGenerator from "./IdGenerator.js"
import * as Investigations from "./Investigations.js"
import * as Library from "./Library.js"
import * as Members from "./Members.js"
import * as Models from "./Models.js"
import * as OAuthGrants from "./OAuthGrants.js"
import * as Organizations from "./Organizations.js"
import * as OutboundEvents from "./OutboundEvents.js"
import * as PlaybookRuns from "./PlaybookRuns.js"
import * as Playbooks from "./Playbooks.js"
import * as Reruns from "./Reruns.js"
import * as Roles from "./Roles.js"
import * as Sandboxes from "./Sandboxes.js"
import * as ScimMappings from "./ScimMappings.js"
import * as Secret from "./Secret.js"
import * as SemanticChecks from "./SemanticChecks.js"
import * as SemanticImports from "./SemanticImports.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as ServiceAccounts from "./ServiceAccounts.js"
import * as Sessions from "./Sessions.js"
import * as Settings from "./Settings.js"
import * as SqlQueries from "./SqlQueries.js"
import * as WebhookDelivery from "./WebhookDelivery.js"
import * as WebhookEndpoints from "./WebhookEndpoints.js"

/**
 * The ports core implements for production itself (secret hashing, random ids): every deployment
 * provides them the same way, beside a store and its adapters. Tests use `testing/Memory` instead.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCorePorts: Layer.Layer<Secret.SecretHasher | IdGenerator.IdGenerator> = Layer.merge(
  Secret.layer,
  IdGenerator.layer
)

/**
 * Options of the use cases that have any.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly playbookRuns?: PlaybookRuns.Options | undefined
  /** The chats' stale limit; the followers use the same one. */
  readonly chats?: Chats.Options | undefined
  readonly answers?: Answers.Options | undefined
  /** Sandbox heartbeats, idle timeout and what is released at start. */
  readonly sandboxes?: Sandboxes.Options | undefined
  /** How often an idle follower looks again. */
  readonly followIdleCheckMillis?: number | undefined
  /** The files a new organization's library starts with. */
  readonly starterLibrary?: ReadonlyArray<Organizations.StarterFile> | undefined
}

/**
 * Every use case (and `Auth`, `Library`), needing only ports, with options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options) => {
  const chats = options.chats ?? Chats.defaultOptions
  // The evaluation checks of changes run evaluations.
  return ChangeEvaluations.layer.pipe(Layer.provideMerge(
    Layer.merge(
      options.playbookRuns === undefined ? PlaybookRuns.layer : PlaybookRuns.layerWith(options.playbookRuns),
      // Evaluations ask their questions through the agent loop; feedback and pins file library changes;
      // end users' sessions name dashboards.
      Layer.mergeAll(
        Evals.layer,
        Feedbacks.layer,
        Reruns.layer,
        Investigations.layer,
        EmbedSessions.layer,
        SemanticImports.layer
      )
    ).pipe(
      Layer.provideMerge(Layer.merge(
        options.answers === undefined ? Answers.layer : Answers.layerWith(options.answers),
        ChatStreams.layerWith({
          staleRunAfter: chats.staleRunAfter,
          idleCheckMillis: options.followIdleCheckMillis ?? ChatStreams.defaultOptions.idleCheckMillis
        })
      )),
      // Between: it files library edits as changes, and the agent runs Python in it; the agent
      // builds dashboards, and pins file them, as changes too.
      Layer.provideMerge(Layer.merge(
        options.sandboxes === undefined ? Sandboxes.layer : Sandboxes.layerWith(options.sandboxes),
        Dashboards.layer
      )),
      Layer.provideMerge(Layer.mergeAll(
        options.starterLibrary === undefined
          ? Organizations.layer
          : Organizations.layerWith({ starterLibrary: options.starterLibrary }),
        Members.layer,
        Roles.layer,
        ServiceAccounts.layer,
        ScimMappings.layer,
        Models.layer,
        AuditLogs.layer,
        ApiKeys.layer,
        Playbooks.layer,
        Chats.layerWith(chats),
        ChatRuns.layerWith(chats),
        Changes.layer,
        Agents.layer,
        Apps.layer,
        ChatChannels.layer,
        Sessions.layer,
        SemanticLayer.layer,
        SqlQueries.layer,
        Settings.layer,
        OAuthGrants.layer,
        WebhookEndpoints.layer,
        WebhookDelivery.layer
      )),
      Layer.provideMerge(Connectors.layer),
      // What a library change must pass before it merges: its semantic models and its dashboards.
      Layer.provideMerge(Layer.effect(
        ChangeChecks.ChangeChecks,
        Effect.map(Effect.all([SemanticChecks.checker, DashboardChecks.checker]), ChangeChecks.make)
      )),
      Layer.provideMerge(Library.layer),
      Layer.provideMerge(Auth.layer),
      Layer.provideMerge(Auditor.layer),
      // What happened, told to the organization's endpoints.
      Layer.provideMerge(OutboundEvents.layer)
    )
  ))
}

/**
 * Every use case (and `Auth`, `Library`), needing only ports.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = layerWith({})

/**
 * The services of `layer`.
 *
 * @since 0.1.0
 * @category models
 */
export type UseCases = Layer.Layer.Success<typeof layer>

/**
 * Running playbooks: `POST /v2/playbooks/{id}/run` and the scheduler's firings.
 *
 * A run is the agent loop (`Answers`) asked the playbook's prompt as its owner, with `write_report`
 * offered; a playbook that names a dashboard runs the dashboard's tiles instead (`DashboardReport`),
 * whose report has a block per tile. When it ends, the report is rendered from its blocks (`ReportHtml`: an `html_preview`
 * whose charts are signed asset URLs, and a mail whose charts travel inline as `cid:` PNGs),
 * delivered to every target, and stored with each target's outcome.
 *
 * The work runs on a fiber of the service, not of the request: a request that gives up (its
 * `timeoutMillis` passed, or its client left) gets `Timeout`, and the run goes on to store and
 * deliver its report, which `GET /v2/playbooks/{id}` then lists.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Answers from "./Answers.js"
import type * as Asset from "./Asset.js"
import { AssetStore } from "./AssetStore.js"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import { Auth } from "./Auth.js"
import { ChartRenderer } from "./ChartRenderer.js"
import * as ChatEvent from "./ChatEvent.js"
import type * as Chats from "./Chats.js"
import * as DashboardReport from "./DashboardReport.js"
import * as Dashboards from "./Dashboards.js"
import * as Delivery from "./Delivery.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { type PlaybookId, ReportId } from "./Ids.js"
import { served } from "./internal/servedReport.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Playbook from "./Playbook.js"
import { PlaybookRepo } from "./PlaybookRepo.js"
import * as Playbooks from "./Playbooks.js"
import type * as Policy from "./Policy.js"
import * as Report from "./Report.js"
import * as ReportHtml from "./ReportHtml.js"
import * as Traced from "./Traced.js"

/**
 * Options of the runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long `run` waits for a report before answering `Timeout` (the run itself goes on). */
  readonly timeoutMillis: number
  /** Where the console is served (the public URL): a delivered dashboard links to itself there. */
  readonly consoleUrl?: string | undefined
}

/**
 * The defaults: a request waits at most two minutes.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { timeoutMillis: 120_000 }

/**
 * The answer of a valid dry run: nothing ran.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DryRunResponse = Schema.Struct({
  playbook_id: Schema.String,
  dry_run: Schema.Literal(true),
  valid: Schema.Literal(true)
}).annotations({ identifier: "DryRunResponse" })
export type DryRunResponse = typeof DryRunResponse.Type

/**
 * The answer of `POST /v2/playbooks/{id}/run`: the report of a run, or a valid dry run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunResponse = Schema.Union(Playbook.RunPlaybookResponse, DryRunResponse)
export type RunResponse = typeof RunResponse.Type

/**
 * How a run can fail once it started.
 *
 * @since 0.1.0
 * @category models
 */
export type RunError = Errors.ExecutionFailed | Errors.NoReport | Errors.Cancelled

/**
 * Runs playbooks.
 *
 * @since 0.1.0
 * @category services
 */
export class PlaybookRuns extends Context.Tag("@sightline/core/PlaybookRuns")<PlaybookRuns, PlaybookRuns.Service>() {}

export declare namespace PlaybookRuns {
  /** The operations. */
  export interface Service {
    /**
     * `POST /v2/playbooks/{id}/run` (`Playbooks.validateRun` decides who may): a dry run answers
     * once the checks pass; a real run waits for the report, at most `timeoutMillis` (`Timeout`).
     */
    readonly run: (
      principal: Policy.Principal,
      id: PlaybookId,
      request: Playbook.RunPlaybookRequest,
      sign: Chats.SignAssetUrl
    ) => Effect.Effect<
      RunResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict | Errors.Timeout | RunError
    >
    /**
     * A scheduled firing (the worker's): runs as the playbook's owner with the owner's live roles
     * (a session principal: no API key, so no client metadata). An owner who left cannot run it
     * (`Unauthenticated`); a playbook that can no longer run is `InvalidRequest`.
     */
    readonly runFiring: (
      firing: Playbooks.Playbooks.Firing,
      sign: Chats.SignAssetUrl
    ) => Effect.Effect<
      Playbook.RunPlaybookResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict | RunError
    >
  }
}

interface Collected {
  readonly assets: ReadonlyArray<Asset.Asset>
  readonly done: ChatEvent.Done | undefined
}

/**
 * Builds the runs with the given options over the services in context (scoped: runs end with the scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const playbooks = yield* Playbooks.Playbooks
    const repo = yield* PlaybookRepo
    const answers = yield* Answers.Answers
    const delivery = yield* Delivery.Delivery
    const assets = yield* AssetStore
    const auth = yield* Auth
    const ids = yield* IdGenerator
    const running = yield* FiberSet.make<Playbook.RunPlaybookResponse, unknown>()
    const auditor = yield* Auditor
    const events = yield* OutboundEvents
    // What a dashboard's run needs, provided to it as the service was built.
    const dashboardRun = yield* Effect.context<DashboardReport.Requirements>()
    const renderer = yield* Effect.serviceOption(ChartRenderer)
    const dashboards = yield* Dashboards.Dashboards
    // A playbook that delivers a dashboard runs only while its runner may read it (a dry run says so).
    const readable = (principal: Policy.Principal, playbook: Playbook.PlaybookRecord) =>
      playbook.dashboard === undefined ? Effect.void : dashboards.get(principal, playbook.dashboard).pipe(
        Effect.catchTag("NotFound", () =>
          new Errors.InvalidRequest({
            message: `dashboard: there is no dashboard ${playbook.dashboard} that the playbook's runner may read`
          })),
        Effect.asVoid
      )
    const audit = (
      actor: Pick<AuditLog.RecordInput, "organizationId" | "actorId" | "authMethod">,
      id: PlaybookId,
      details: AuditLog.Details
    ) => auditor.record({ ...actor, action: "playbook.run", resourceType: "playbook", resourceId: id, details })

    // Everything after the checks: ask, wait, render, deliver, store; then the outcome, as an
    // outbound event (an interrupted run, at shutdown, has none).
    const execute = (
      principal: Policy.Principal,
      playbook: Playbook.PlaybookRecord,
      sign: Chats.SignAssetUrl
    ) => {
      let chatId: string | undefined
      // What the run made: the report of the prompt's answer, or of the dashboard's tiles.
      const made = playbook.dashboard === undefined
        ? Effect.gen(function*() {
          const handle = yield* answers.ask(
            principal,
            { question: playbook.prompt, connector_ids: playbook.connector_ids },
            sign,
            { source: "playbook", report: true }
          )
          chatId = handle.metadata.chat_id
          const collected = yield* Stream.runFold(
            handle.events,
            { assets: [], done: undefined } as Collected,
            (acc, { event }) =>
              event.type === "asset"
                ? { ...acc, assets: [...acc.assets, event.asset] }
                : event.type === "done"
                ? { ...acc, done: event }
                : acc
          )
          const done = collected.done
          if (done?.status !== "completed") {
            const message = done?.error ?? Errors.defaultMessage.execution_failed
            return yield* (message === ChatEvent.cancelledMessage
              ? new Errors.Cancelled({ message })
              : new Errors.ExecutionFailed({ message }))
          }
          const written = yield* handle.report
          if (Option.isNone(written)) {
            return yield* new Errors.NoReport({
              message: `the run of playbook ${playbook.id} ended without a report (chat ${handle.metadata.chat_id})`
            })
          }
          return { chatId: handle.metadata.chat_id, ...written.value, assets: collected.assets }
        })
        : DashboardReport.snapshot(principal, playbook.dashboard, {
          sign,
          renderer,
          link: options.consoleUrl === undefined
            ? undefined
            : `${options.consoleUrl.replace(/\/+$/, "")}/#/dashboards/${playbook.dashboard}`
        }).pipe(
          Effect.tap((snapshot) => Effect.sync(() => (chatId = snapshot.chatId))),
          // Its checks ran before it started (`run`): what fails now is the run itself.
          Effect.mapError((error) => new Errors.ExecutionFailed({ message: error.message })),
          Effect.provide(dashboardRun)
        )
      return Effect.gen(function*() {
        const { assets: madeAssets, chatId: madeChatId, draft, images } = yield* made
        const byRef = new Map(images.map((image, i) => [image.ref, { image, cid: `chart-${i + 1}@sightline` }]))
        const signed = new Map<string, string>()
        for (const image of images) signed.set(image.ref, yield* sign(image.assetId))
        const external = (url: string) => url.startsWith("https://") ? url : undefined
        const preview = ReportHtml.html(draft, { image: (url) => signed.get(url) ?? external(url) })
        const mail = ReportHtml.render(draft, {
          image: (url) => {
            const inline = byRef.get(url)
            return inline === undefined ? external(url) : `cid:${inline.cid}`
          }
        })
        const inlineImages: Array<Delivery.InlineImage> = []
        for (const { cid, image } of byRef.values()) {
          const stored = yield* assets.get(image.storageKey)
          if (Option.isSome(stored)) {
            inlineImages.push({
              cid,
              filename: `${cid.split("@")[0]}.png`,
              mimeType: stored.value.mimeType,
              bytes: stored.value.bytes
            })
          }
        }
        const results = yield* delivery.deliver({
          organizationId: playbook.organization_id,
          subject: draft.subject,
          html: mail.html,
          text: mail.text,
          images: inlineImages,
          blocks: draft.blocks,
          targets: {
            emails: playbook.email_addresses ?? [],
            ...(playbook.chat_channel_id === undefined ? {} : { chatChannelId: playbook.chat_channel_id })
          }
        })
        const record = new Report.ReportRecord({
          id: ReportId.make(yield* ids.uuid),
          organization_id: playbook.organization_id,
          playbook_id: playbook.id,
          chat_id: madeChatId,
          subject: draft.subject,
          summary: draft.summary,
          // Stored naming each chart's asset, which every read signs anew (`image_url` is a URL).
          blocks: Report.replaceImageUrls(draft.blocks, (url) => {
            const inline = byRef.get(url)
            return inline === undefined ? url : Report.assetRef(inline.image.assetId)
          }),
          html_preview: preview,
          deliveries: results.map(Delivery.toOutcome),
          created_at: yield* DateTime.now
        })
        // A playbook deleted while it ran takes its reports with it: the chat keeps the answer.
        yield* repo.addReport(record).pipe(
          Effect.catchAll((error) => Effect.logWarning("the report of a playbook run was not stored", error.message))
        )
        return { chat_id: madeChatId, report: yield* served(record, sign), assets: madeAssets }
      }).pipe(
        Effect.tap((result) =>
          events.publish(playbook.organization_id, "playbook.run.completed", {
            playbook_id: playbook.id,
            chat_id: result.chat_id,
            report_id: result.report.id
          })
        ),
        Effect.tapErrorCause((cause) =>
          Cause.isInterruptedOnly(cause) ? Effect.void : events.publish(
            playbook.organization_id,
            "playbook.run.failed",
            { playbook_id: playbook.id, ...(chatId === undefined ? {} : { chat_id: chatId }) }
          )
        ),
        Effect.annotateLogs({ playbook_id: playbook.id })
      )
    }

    const run = Traced.fn("PlaybookRuns.run")(function*(
      principal: Policy.Principal,
      id: PlaybookId,
      request: Playbook.RunPlaybookRequest,
      sign: Chats.SignAssetUrl
    ) {
      const check = yield* playbooks.validateRun(principal, id, request)
      yield* readable(principal, check.playbook)
      yield* audit(AuditLog.actorOf(principal), id, { trigger: "manual", dry_run: check.dryRun })
      if (check.dryRun) return { playbook_id: id, dry_run: true as const, valid: true as const }
      // Started on the service's fiber set: the request may give up, the run does not.
      const fiber = yield* FiberSet.run(running, execute(principal, check.playbook, sign))
      return yield* Fiber.join(fiber).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(options.timeoutMillis),
          onTimeout: () =>
            new Errors.Timeout({
              message: `playbook ${id} is still running after ${
                Math.round(options.timeoutMillis / 1000)
              } s; its report will be listed by GET /v2/playbooks/${id}`
            })
        })
      )
    })

    const runFiring = Traced.fn("PlaybookRuns.runFiring")(function*(
      firing: Playbooks.Playbooks.Firing,
      sign: Chats.SignAssetUrl
    ) {
      const owner = yield* auth.sessionPrincipal(firing.playbook.organization_id, firing.playbook.owner_id)
      const check = yield* playbooks.validateRun(owner, firing.playbook.id, { dry_run: false })
      yield* readable(owner, check.playbook)
      // No member started it: the scheduler is the actor.
      yield* audit({ organizationId: owner.organizationId, authMethod: "system" }, firing.playbook.id, {
        trigger: "schedule",
        scheduled_at: DateTime.formatIso(firing.scheduledAt)
      })
      return yield* Fiber.join(yield* FiberSet.run(running, execute(owner, check.playbook, sign)))
    })

    return PlaybookRuns.of({ run, runFiring })
  })

/**
 * What the runs need.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | Playbooks.Playbooks
  | PlaybookRepo
  | Answers.Answers
  | Delivery.Delivery
  | AssetStore
  | Auth
  | Auditor
  | IdGenerator
  | OutboundEvents
  | DashboardReport.Requirements

/**
 * The runs with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<PlaybookRuns, never, Requirements> = Layer.scoped(
  PlaybookRuns,
  makeWith(defaultOptions)
)

/**
 * The runs with other options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<PlaybookRuns, never, Requirements> =>
  Layer.scoped(PlaybookRuns, makeWith(options))

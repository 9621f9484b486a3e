/**
 * The background worker every server process runs: it fires schedules and executes queued work.
 *
 * - **Schedules.** Every `tickMillis`, deployed playbooks whose time has come are claimed
 *   (`Playbooks.claim` moves the schedule on under a row lock) and a `playbook.run` job is queued in
 *   the same transaction, with the dedupe key `playbook:<id>:<fire time>`: whatever the number of
 *   processes, a firing runs once. Missed firings collapse into one catch-up run (the next time is
 *   computed from now). Agents' `cron_strings` are queued as `schedule` runs the same way
 *   (`Agents.queueScheduled`).
 * - **Jobs.** `concurrency` fibers claim `playbook.run`, `agent.run` and `eval.run` jobs under a lease, renewed
 *   while the job runs, so a process that dies lets another take the job over when the lease
 *   runs out. A job whose work fails is failed for good (a run delivers mail: retrying a failure
 *   could deliver twice); a job whose process died is claimed again, up to its attempts.
 * - **Evaluation runs** (`eval.run`) are `Evals.execute`'s: each case asked and judged in turn.
 * - **Evaluation checks of changes** (`change.evaluate`) are `ChangeEvaluations.execute`'s.
 * - **Outbound events** (`webhook.deliver`) are `WebhookDelivery.deliver`'s: one attempt per claim,
 *   handed back to the queue with the time of the next when it failed.
 * - **Agent runs** go `queued → running → completed | failed`; a cancel (`Agents.cancelRun`, from
 *   any process) is seen within `pollMillis` and interrupts the run. A run found `running` when its
 *   job is claimed again belonged to a process that died: it is failed, never left running.
 *
 * Each job runs in a trace of its own (`job <kind>`), linked to the span that queued it.
 *
 * Shutting down interrupts the work: the claimed jobs go back to the queue at once.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AgentRepo } from "./AgentRepo.js"
import * as AgentRun from "./AgentRun.js"
import * as Agents from "./Agents.js"
import * as Answers from "./Answers.js"
import { Auth } from "./Auth.js"
import * as ChangeEvaluation from "./ChangeEvaluation.js"
import { ChangeEvaluations } from "./ChangeEvaluations.js"
import * as ChatEvent from "./ChatEvent.js"
import type * as Chats from "./Chats.js"
import * as Delivery from "./Delivery.js"
import * as EvalRun from "./EvalRun.js"
import * as Evals from "./Evals.js"
import { OrganizationId, PlaybookId } from "./Ids.js"
import * as JobQueue from "./JobQueue.js"
import * as OutboundEvent from "./OutboundEvent.js"
import * as OutboundEvents from "./OutboundEvents.js"
import * as Playbook from "./Playbook.js"
import { PlaybookRepo } from "./PlaybookRepo.js"
import * as PlaybookRuns from "./PlaybookRuns.js"
import * as Playbooks from "./Playbooks.js"
import * as ReportHtml from "./ReportHtml.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import { WebhookDelivery } from "./WebhookDelivery.js"

/**
 * Options of the worker.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Names this process in job leases (`locked_by`). */
  readonly workerId: string
  /** Jobs run at once by this process (default 2). */
  readonly concurrency?: number | undefined
  /** How often an idle slot looks for a job, and a running agent run for its cancel (default 1 s). */
  readonly pollMillis?: number | undefined
  /** How often schedules are checked (default 15 s). */
  readonly tickMillis?: number | undefined
  /** The lease of a claimed job; it is renewed every third of it (default 60 s). */
  readonly leaseMillis?: number | undefined
  /** Signs the asset URLs of reports (the http package's `AssetUrls.sign`). */
  readonly sign: Chats.SignAssetUrl
}

/**
 * The job kind of a scheduled playbook firing.
 *
 * @since 0.1.0
 * @category constants
 */
export const playbookJobKind = "playbook.run"

/**
 * The payload of a `playbook.run` job.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlaybookJobPayload = Schema.Struct({
  organizationId: OrganizationId,
  playbookId: PlaybookId,
  scheduledAt: Schema.String
})
export type PlaybookJobPayload = typeof PlaybookJobPayload.Type

/**
 * Attempts of a scheduled playbook run: one more when its process dies, none after a failure.
 *
 * @since 0.1.0
 * @category constants
 */
export const playbookJobAttempts = 2

/**
 * The error of an agent run whose process stopped while it ran.
 *
 * @since 0.1.0
 * @category constants
 */
export const abandonedRunMessage = "the server process running it stopped before it finished"

/**
 * What the worker needs.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | Playbooks.Playbooks
  | PlaybookRepo
  | PlaybookRuns.PlaybookRuns
  | JobQueue.JobQueue
  | Transaction
  | AgentRepo
  | Agents.Agents
  | Answers.Answers
  | Auth
  | Delivery.Delivery
  | Evals.Evals
  | ChangeEvaluations
  | OutboundEvents.OutboundEvents
  | WebhookDelivery

/**
 * Fires the due playbooks at `now`: each firing is claimed and queued in one transaction.
 *
 * @since 0.1.0
 * @category utils
 */
export const fireDue = (now: DateTime.Utc) =>
  Effect.gen(function*() {
    const playbooks = yield* Playbooks.Playbooks
    const jobs = yield* JobQueue.JobQueue
    const tx = yield* Transaction
    let fired = 0
    for (const due of yield* playbooks.due(now)) {
      const queued = yield* tx.withTransaction(Effect.gen(function*() {
        const firing = yield* playbooks.claim(due.organization_id, due.id, now)
        if (Option.isNone(firing)) return false
        const scheduledAt = DateTime.formatIso(firing.value.scheduledAt)
        const payload: PlaybookJobPayload = {
          organizationId: due.organization_id,
          playbookId: due.id,
          scheduledAt
        }
        yield* jobs.enqueue({
          organizationId: due.organization_id,
          kind: playbookJobKind,
          payload,
          dedupeKey: `playbook:${due.id}:${scheduledAt}`,
          maxAttempts: playbookJobAttempts
        })
        return true
      }))
      if (queued) fired += 1
    }
    // Agents keep no next time: each cron expression's latest time at or before now is queued once
    // (the dedupe key holds it), if it came after the agent's last edit, so a new or edited
    // schedule never fires for a time that passed before it existed, and missed times collapse
    // into the latest one.
    const agents = yield* AgentRepo
    const agentUseCases = yield* Agents.Agents
    for (const agent of yield* agents.listScheduled()) {
      for (const expression of agent.cron_strings) {
        const latest = Playbook.previousFiring(expression, now)
        if (Option.isNone(latest) || DateTime.lessThan(latest.value, agent.updated_at)) continue
        if (yield* agentUseCases.queueScheduled(agent.organization_id, agent.id, latest.value)) fired += 1
      }
    }
    return fired
  })

/**
 * Builds the worker's loops (scoped: they stop, and hand their jobs back, when the scope closes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const jobs = yield* JobQueue.JobQueue
    const playbookRepo = yield* PlaybookRepo
    const runs = yield* PlaybookRuns.PlaybookRuns
    const agents = yield* AgentRepo
    const answers = yield* Answers.Answers
    const auth = yield* Auth
    const delivery = yield* Delivery.Delivery
    const evals = yield* Evals.Evals
    const changeEvaluations = yield* ChangeEvaluations
    const tx = yield* Transaction
    const events = yield* OutboundEvents.OutboundEvents
    const webhooks = yield* WebhookDelivery
    const context = yield* Effect.context<Requirements>()
    const pollMillis = options.pollMillis ?? 1_000
    const leaseMillis = options.leaseMillis ?? 60_000

    // --- playbooks ------------------------------------------------------------------------------

    // The playbook as it is now: a firing runs the current prompt and targets. One deleted or
    // undeployed since it was queued does not run.
    const runPlaybook = (job: JobQueue.Job) =>
      Effect.gen(function*() {
        const payload = yield* Schema.decodeUnknown(PlaybookJobPayload)(job.payload).pipe(Effect.orDie)
        const playbook = yield* playbookRepo.get(payload.organizationId, payload.playbookId)
        if (Option.isNone(playbook) || playbook.value.status !== "deployed") return
        const scheduledAt = yield* Effect.orDie(DateTime.make(payload.scheduledAt))
        yield* runs.runFiring({ playbook: playbook.value, scheduledAt }, options.sign)
      })

    // --- agent runs -----------------------------------------------------------------------------

    const setRun = (
      organizationId: OrganizationId,
      id: AgentRun.AgentRun["id"],
      move: (run: AgentRun.AgentRun) => Either.Either<AgentRun.AgentRun, unknown>
    ) =>
      tx.withTransaction(Effect.gen(function*() {
        const run = yield* agents.getRunForUpdate(organizationId, id)
        if (Option.isNone(run)) return Option.none<AgentRun.AgentRun>()
        const moved = move(run.value)
        if (Either.isLeft(moved)) return Option.none<AgentRun.AgentRun>()
        yield* Effect.orDie(agents.updateRun(moved.right))
        // Told once, in the transaction that records the outcome.
        const status = moved.right.status
        if ((status === "completed" || status === "failed") && run.value.status !== status) {
          yield* events.publish(organizationId, `agent.run.${status}`, {
            agent_id: moved.right.agent_id,
            run_id: moved.right.id,
            ...(moved.right.chat_id === undefined ? {} : { chat_id: moved.right.chat_id })
          })
        }
        return Option.some(moved.right)
      }))

    const runAgent = (job: JobQueue.Job) =>
      Effect.gen(function*() {
        const payload = yield* Schema.decodeUnknown(AgentRun.JobPayload)(job.payload).pipe(Effect.orDie)
        const { agentRunId: id, organizationId } = payload
        const found = yield* agents.getRun(organizationId, id)
        if (Option.isNone(found)) return
        const now = yield* DateTime.now
        if (found.value.status === "running") {
          // Claimed again: the process that ran it died.
          yield* setRun(organizationId, id, (run) => AgentRun.fail(run, abandonedRunMessage, now))
          return
        }
        // Cancelled (or finished) before a worker got to it.
        if (found.value.status !== "queued") return
        const agent = yield* agents.get(organizationId, found.value.agent_id)
        const fail = (message: string) =>
          Effect.flatMap(DateTime.now, (at) => setRun(organizationId, id, (run) => AgentRun.fail(run, message, at)))
        if (Option.isNone(agent)) return yield* fail("the agent was deleted")
        const started = yield* setRun(organizationId, id, (run) => AgentRun.start(run, now))
        if (Option.isNone(started)) return
        const owner = yield* Effect.either(auth.sessionPrincipal(organizationId, agent.value.owner_id))
        if (Either.isLeft(owner)) return yield* fail("the agent's owner is no longer a member")
        const asked = yield* Effect.either(answers.ask(
          owner.right,
          { question: agent.value.prompt, connector_ids: agent.value.connector_ids },
          options.sign,
          {
            source: "agent",
            ...(found.value.payload === undefined ? {} : { context: JSON.stringify(found.value.payload, null, 2) })
          }
        ))
        if (Either.isLeft(asked)) return yield* fail(`the run could not start: ${asked.left.message}`)
        const handle = asked.right
        const text = yield* Effect.fork(Stream.runFold(
          handle.events,
          "",
          (answer, { event }) => event.type === "text" ? answer + event.text : answer
        ))
        yield* setRun(
          organizationId,
          id,
          (run) => Either.right(new AgentRun.AgentRun({ ...run, chat_id: handle.metadata.chat_id }))
        )
        // A cancel may come from any process: it shows in the store, and this process stops the run.
        const watchCancel = Effect.gen(function*() {
          const run = yield* agents.getRun(organizationId, id)
          if (Option.isSome(run) && run.value.status === "cancelled") {
            yield* Effect.ignore(answers.cancel(owner.right, handle.metadata.chat_id))
            return true
          }
          return false
        }).pipe(
          Effect.repeat({ schedule: Schedule.spaced(Duration.millis(pollMillis)), until: (cancelled) => cancelled })
        )
        const done = yield* Effect.raceFirst(
          handle.done,
          Effect.zipRight(watchCancel, Effect.never)
        )
        const at = yield* DateTime.now
        if (done.status === "completed") {
          yield* setRun(organizationId, id, (run) => AgentRun.complete(run, at))
          yield* deliverAnswer(agent.value, yield* Fiber.join(text), organizationId)
        } else if (done.error !== ChatEvent.cancelledMessage) {
          yield* setRun(organizationId, id, (run) => AgentRun.fail(run, done.error ?? "the run failed", at))
        }
      })

    // The answer of an agent run, to the agent's targets (when it has any).
    const deliverAnswer = (
      agent: {
        readonly name: string
        readonly email_addresses: ReadonlyArray<string>
        readonly chat_channel_id?: string | undefined
      },
      answer: string,
      organizationId: OrganizationId
    ) =>
      Effect.gen(function*() {
        if (agent.email_addresses.length === 0 && agent.chat_channel_id === undefined) return
        const report = {
          subject: `${agent.name}: run finished`,
          summary: answer.split("\n")[0] ?? "",
          blocks: [{ type: "hero" as const, heading: agent.name }, { type: "text" as const, content: answer }]
        }
        const rendered = ReportHtml.render(report, { image: () => undefined })
        const results = yield* delivery.deliver({
          organizationId,
          subject: report.subject,
          html: rendered.html,
          text: rendered.text,
          blocks: report.blocks,
          targets: {
            emails: agent.email_addresses,
            ...(agent.chat_channel_id === undefined ? {} : { chatChannelId: agent.chat_channel_id })
          }
        })
        for (const result of results) {
          if (result._tag === "Failed") {
            yield* Effect.logWarning("an agent run's answer was not delivered", result.reason)
          }
        }
      })

    // --- the loops ------------------------------------------------------------------------------

    const runEval = (job: JobQueue.Job) =>
      Effect.flatMap(
        Effect.orDie(Schema.decodeUnknown(EvalRun.JobPayload)(job.payload)),
        (payload) => evals.execute(payload, options.sign)
      )

    const runChangeEvaluation = (job: JobQueue.Job) =>
      Effect.flatMap(
        Effect.orDie(Schema.decodeUnknown(ChangeEvaluation.JobPayload)(job.payload)),
        (payload) => changeEvaluations.execute(payload, options.sign)
      )

    // A job's work; a delivery that should be tried again says when.
    const perform = (job: JobQueue.Job): Effect.Effect<JobQueue.FailOptions | void, unknown> =>
      job.kind === OutboundEvent.jobKind
        ? webhooks.deliver(job)
        : job.kind === playbookJobKind
        ? Effect.asVoid(runPlaybook(job))
        : job.kind === EvalRun.jobKind
        ? runEval(job)
        : job.kind === ChangeEvaluation.jobKind
        ? runChangeEvaluation(job)
        : Effect.asVoid(runAgent(job))

    // Records how a claimed job ended. Runs uninterruptibly (`onExit`), so even a job interrupted
    // by shutdown is handed back at once instead of when its lease runs out.
    const settle = (job: JobQueue.Job, exit: Exit.Exit<JobQueue.FailOptions | void, unknown>) =>
      Effect.gen(function*() {
        if (Exit.isSuccess(exit)) {
          return yield* Effect.ignore(exit.value === undefined ? jobs.complete(job) : jobs.fail(job, exit.value))
        }
        if (Cause.isInterruptedOnly(exit.cause)) {
          return yield* Effect.ignore(
            jobs.fail(job, { error: "handed back at shutdown", retryAt: yield* DateTime.now })
          )
        }
        const error = Cause.pretty(exit.cause).split("\n")[0]!.slice(0, 500)
        yield* Effect.logWarning(`job ${job.kind} failed`, error)
        yield* Effect.ignore(jobs.fail(job, { error }))
      })

    // Runs a claimed job with its lease renewed while it runs.
    const handle = (job: JobQueue.Job) => {
      const renew = jobs.renew(job, leaseMillis).pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(Math.max(10, Math.floor(leaseMillis / 3))))),
        Effect.ignore
      )
      // Each job is a trace of its own (a run can outlive what queued it by hours), linked to the
      // span that queued it: the request, the answer or the delivery that asked for it.
      const queuedBy = Traced.spanOfTraceparent(job.traceparent)
      return Effect.raceFirst(perform(job), Effect.zipRight(renew, Effect.never)).pipe(
        Effect.onExit((exit) => settle(job, exit)),
        Effect.withSpan(`job ${job.kind}`, {
          root: true,
          kind: "consumer",
          attributes: { "sightline.job.id": job.id, "sightline.job.attempt": job.attempts },
          links: queuedBy === undefined ? [] : [{ _tag: "SpanLink", span: queuedBy, attributes: {} }]
        }),
        Effect.annotateLogs({ job_id: job.id, job_kind: job.kind })
      )
    }

    const slot = jobs.claim({
      workerId: options.workerId,
      kinds: [playbookJobKind, AgentRun.jobKind, EvalRun.jobKind, ChangeEvaluation.jobKind, OutboundEvent.jobKind],
      leaseMillis
    })
      .pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.sleep(Duration.millis(pollMillis)),
          onSome: (job) => Effect.ignore(handle(job))
        })),
        Effect.catchAllCause((cause) =>
          Effect.zipRight(Effect.logError("worker slot failed", cause), Effect.sleep(Duration.millis(pollMillis)))
        ),
        Effect.forever
      )

    const scheduler = Effect.flatMap(DateTime.now, fireDue).pipe(
      Effect.provide(context),
      Effect.catchAllCause((cause) => Effect.logError("firing schedules failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(options.tickMillis ?? 15_000)))
    )

    for (let i = 0; i < (options.concurrency ?? 2); i++) yield* Effect.forkScoped(slot)
    yield* Effect.forkScoped(scheduler)
  })

/**
 * The worker as a layer: it provides nothing, and runs while the layer lives.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never, never, Requirements> => Layer.scopedDiscard(make(options))

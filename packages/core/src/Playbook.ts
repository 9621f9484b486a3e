/**
 * Playbooks: saved prompts with an optional cron schedule and delivery targets, their lifecycle
 * (`draft` → `deployed`), schedules, and the request and response shapes of the Playbooks endpoints.
 *
 * Schedules are evaluated in UTC. A deployed playbook with a schedule stores the time of its next
 * firing (`next_run_at`), so the scheduler reads due playbooks with one indexed query instead of
 * parsing every cron expression on every tick.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Cron from "effect/Cron"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Asset } from "./Asset.js"
import { SortDirection } from "./Chat.js"
import * as Dashboard from "./Dashboard.js"
import { isEmailAddress } from "./Delivery.js"
import { InvalidRequest } from "./Errors.js"
import { ChatId, ConnectorId, MemberId, OrganizationId, PlaybookId } from "./Ids.js"
import { Email } from "./Member.js"
import { limitParam, offsetParam } from "./Pagination.js"
import { Report } from "./Report.js"
import * as TrustedSchema from "./TrustedSchema.js"

// ---------------------------------------------------------------------------------------------
// Schedules
// ---------------------------------------------------------------------------------------------

const parseCron = (expression: string) => Cron.parse(expression, "UTC")

const nextFiring = (cron: Cron.Cron, after: DateTime.Utc): Option.Option<DateTime.Utc> =>
  // `Cron.next` throws when an expression matches no date (say, February 30th).
  Option.liftThrowable(() => DateTime.unsafeFromDate(Cron.next(cron, DateTime.toDate(after))))()

const cronIssue = (expression: string): true | string => {
  if (expression.trim().split(/\s+/).length !== 5) {
    return `invalid cron_string "${expression}": expected five fields (minute hour day-of-month month day-of-week)`
  }
  return Either.match(parseCron(expression), {
    onLeft: (error) => `invalid cron_string "${expression}": ${error.message}`,
    onRight: (cron) =>
      Option.isSome(nextFiring(cron, DateTime.unsafeMake(0))) || `invalid cron_string "${expression}": it never fires`
  })
}

/**
 * A schedule: a standard five-field cron expression, evaluated in UTC. A sixth (seconds) field is
 * refused: playbooks deliver reports, and a schedule firing every second would only flood inboxes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CronString = Schema.String.pipe(
  Schema.filter(cronIssue),
  Schema.annotations({
    identifier: "CronString",
    examples: ["0 9 * * 1-5"],
    // Random text is almost never a schedule: property tests draw from real ones.
    arbitrary: () => (fc) => fc.constantFrom("0 9 * * 1-5", "*/15 * * * *", "30 6 1 * *", "0 0 * * 0")
  })
)

/**
 * The next `count` times a schedule fires after `after`, or why it is not a valid schedule: what a
 * playbook editor previews (the same rule the server validates and schedules with).
 *
 * @since 0.1.0
 * @category utils
 */
export const upcomingFirings = (
  expression: string,
  after: DateTime.Utc,
  count: number
): Either.Either<ReadonlyArray<DateTime.Utc>, string> => {
  const issue = cronIssue(expression)
  if (issue !== true) return Either.left(issue)
  return Either.map(parseCron(expression), (cron) => {
    const firings: Array<DateTime.Utc> = []
    let at = after
    while (firings.length < count) {
      const next = nextFiring(cron, at)
      if (Option.isNone(next)) break
      firings.push(next.value)
      at = next.value
    }
    return firings
  }).pipe(Either.mapLeft((error) => error.message))
}

/**
 * The latest time a cron expression fires at or before `at` (none for an invalid expression).
 *
 * @since 0.1.0
 * @category utils
 */
export const previousFiring = (expression: string, at: DateTime.Utc): Option.Option<DateTime.Utc> =>
  Option.getRight(parseCron(expression)).pipe(
    Option.flatMap((cron) =>
      // `Cron.prev` is strict at whole seconds, and throws when it finds nothing within its search.
      Option.liftThrowable(() =>
        DateTime.unsafeFromDate(Cron.prev(cron, new Date(DateTime.toEpochMillis(at) + 1_000)))
      )()
    )
  )

/**
 * The time a schedule fires next, strictly after `after`; none without a (satisfiable) schedule.
 *
 * @since 0.1.0
 * @category utils
 */
export const nextRunAt = (
  playbook: { readonly cron_string?: string | undefined },
  after: DateTime.Utc
): Option.Option<DateTime.Utc> =>
  Option.fromNullable(playbook.cron_string).pipe(
    Option.flatMap((expression) => Option.getRight(parseCron(expression))),
    Option.flatMap((cron) => nextFiring(cron, after))
  )

// ---------------------------------------------------------------------------------------------
// Records and wire shapes
// ---------------------------------------------------------------------------------------------

/**
 * A playbook's state. There is no undeploy: the API has no transition back to `draft`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlaybookStatus = Schema.Literal("draft", "deployed")
export type PlaybookStatus = typeof PlaybookStatus.Type

/**
 * A playbook as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class PlaybookRecord extends Schema.Class<PlaybookRecord>("@sightline/core/PlaybookRecord")({
  id: PlaybookId,
  organization_id: OrganizationId,
  owner_id: MemberId,
  /**
   * The audience the playbook was made in (`Audience`: the fingerprint of the creating key's client
   * attributes); absent or `""` without attributes. Only callers of that audience reach it.
   */
  audience: Schema.optional(Schema.String),
  name: Schema.String,
  prompt: Schema.String,
  status: PlaybookStatus,
  connector_ids: Schema.Array(ConnectorId),
  cron_string: Schema.optional(CronString),
  email_addresses: Schema.Array(Email),
  chat_channel_id: Schema.optional(Schema.String),
  /** A dashboard it delivers (its name) instead of asking its prompt. */
  dashboard: Schema.optional(Schema.String),
  dataset_ids: Schema.Array(Schema.String),
  tagged_chat_user_ids: Schema.Array(Schema.String),
  selected_template_data_ids: Schema.Array(Schema.String),
  /** When it was last deployed. */
  deployed_at: Schema.optional(Schema.DateTimeUtc),
  /** When its schedule fires next: set only while deployed with a schedule. */
  next_run_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * A playbook as served; unset schedule and delivery fields are left out.
 *
 * @since 0.1.0
 * @category models
 */
export class Playbook extends Schema.Class<Playbook>("@sightline/core/Playbook")({
  id: PlaybookId,
  name: Schema.String,
  prompt: Schema.String,
  status: PlaybookStatus,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  connector_ids: Schema.Array(ConnectorId),
  cron_string: Schema.optional(Schema.String),
  email_addresses: Schema.optional(Schema.Array(Schema.String)),
  chat_channel_id: Schema.optional(Schema.String),
  /** The dashboard a run delivers, as a snapshot of each tile, instead of asking the prompt. */
  dashboard: Schema.optional(Schema.String)
}) {}

/**
 * The served shape of a stored playbook.
 *
 * @since 0.1.0
 * @category utils
 */
export const toPlaybook = (record: PlaybookRecord): Playbook =>
  TrustedSchema.make(Playbook, {
    id: record.id,
    name: record.name,
    prompt: record.prompt,
    status: record.status,
    created_at: record.created_at,
    updated_at: record.updated_at,
    connector_ids: record.connector_ids,
    ...(record.cron_string === undefined ? {} : { cron_string: record.cron_string }),
    ...(record.email_addresses.length === 0 ? {} : { email_addresses: record.email_addresses }),
    ...(record.chat_channel_id === undefined ? {} : { chat_channel_id: record.chat_channel_id }),
    ...(record.dashboard === undefined ? {} : { dashboard: record.dashboard })
  })

// ---------------------------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------------------------

/**
 * The sort fields of List Playbooks.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlaybookSortField = Schema.Literal("name", "created_at", "updated_at")
export type PlaybookSortField = typeof PlaybookSortField.Type

/**
 * The query of GET /v2/playbooks (same paging and sorting rules as List Chats).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListPlaybooksQuery = Schema.Struct({
  limit: limitParam(1, 100, 20),
  offset: offsetParam,
  /** Case-insensitive substring of the name or the prompt. */
  search_term: Schema.optional(Schema.String),
  sort_by: Schema.optionalWith(PlaybookSortField, { default: () => "updated_at" as const }),
  sort_direction: Schema.optionalWith(SortDirection, { default: () => "desc" as const }),
  status_filter: Schema.optional(PlaybookStatus)
})
export type ListPlaybooksQuery = typeof ListPlaybooksQuery.Type

/**
 * The response of GET /v2/playbooks.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListPlaybooksResponse = Schema.Struct({
  playbooks: Schema.Array(Playbook),
  total_count: Schema.NonNegativeInt
})
export type ListPlaybooksResponse = typeof ListPlaybooksResponse.Type

/**
 * The query of GET /v2/playbooks/{id}: paging of its reports (newest first).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetPlaybookQuery = Schema.Struct({
  limit: limitParam(1, 100, 20),
  offset: offsetParam
})
export type GetPlaybookQuery = typeof GetPlaybookQuery.Type

/**
 * The response of GET /v2/playbooks/{id}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetPlaybookResponse = Schema.Struct({
  playbook: Playbook,
  reports: Schema.Array(Report),
  total_reports_count: Schema.NonNegativeInt
})
export type GetPlaybookResponse = typeof GetPlaybookResponse.Type

/** An empty string clears a field (the seed's fields are plain strings, so there is no `null`). */
const clearable = <S extends Schema.Schema.Any>(schema: S) => Schema.Union(Schema.Literal(""), schema)

/**
 * The body of PATCH /v2/playbooks/{id}: every field is optional and replaces the stored value.
 * `cron_string: ""`, `chat_channel_id: ""` and `dashboard: ""` clear them, `email_addresses: []` stops
 * e-mail delivery.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdatePlaybookRequest = Schema.Struct({
  name: Schema.optional(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))),
  prompt: Schema.optional(Schema.String),
  cron_string: Schema.optional(clearable(CronString)),
  connector_ids: Schema.optional(Schema.Array(ConnectorId)),
  dataset_ids: Schema.optional(Schema.Array(Schema.NonEmptyString)),
  email_addresses: Schema.optional(Schema.Array(Email)),
  chat_channel_id: Schema.optional(Schema.String),
  /** A dashboard to deliver instead of the prompt's answer. */
  dashboard: Schema.optional(clearable(Dashboard.Name)),
  tagged_chat_user_ids: Schema.optional(Schema.Array(Schema.NonEmptyString)),
  selected_template_data_ids: Schema.optional(Schema.Array(Schema.NonEmptyString))
})
export type UpdatePlaybookRequest = typeof UpdatePlaybookRequest.Type

/**
 * The response of DELETE /v2/playbooks/{id}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeletePlaybookResponse = Schema.Struct({ playbook_id: PlaybookId, deleted_at: Schema.DateTimeUtc })
export type DeletePlaybookResponse = typeof DeletePlaybookResponse.Type

/**
 * The response of POST /v2/playbooks/{id}/deploy.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeployPlaybookResponse = Schema.Struct({ playbook_id: PlaybookId, deployed_at: Schema.DateTimeUtc })
export type DeployPlaybookResponse = typeof DeployPlaybookResponse.Type

/**
 * The body of POST /v2/playbooks/{id}/run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunPlaybookRequest = Schema.Struct({
  /** Validates the playbook without running it. */
  dry_run: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type RunPlaybookRequest = typeof RunPlaybookRequest.Type

/**
 * The response of POST /v2/playbooks/{id}/run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunPlaybookResponse = Schema.Struct({
  chat_id: ChatId,
  report: Report,
  assets: Schema.Array(Asset)
})
export type RunPlaybookResponse = typeof RunPlaybookResponse.Type

// ---------------------------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------------------------

/**
 * A new playbook: empty (no name, no prompt, nothing attached) and a `draft`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: PlaybookId
  readonly organizationId: OrganizationId
  readonly ownerId: MemberId
  /** The creator's audience (`Policy.audienceOf`); none when absent. */
  readonly audience?: string | undefined
  readonly at: DateTime.Utc
}): PlaybookRecord =>
  new PlaybookRecord({
    id: options.id,
    organization_id: options.organizationId,
    owner_id: options.ownerId,
    ...(options.audience === undefined || options.audience === "" ? {} : { audience: options.audience }),
    name: "",
    prompt: "",
    status: "draft",
    connector_ids: [],
    email_addresses: [],
    dataset_ids: [],
    tagged_chat_user_ids: [],
    selected_template_data_ids: [],
    created_at: options.at,
    updated_at: options.at
  })

const scheduled = (
  record: PlaybookRecord,
  next: Option.Option<DateTime.Utc>
): PlaybookRecord => {
  const { next_run_at: _previous, ...rest } = record
  return new PlaybookRecord(Option.match(next, { onNone: () => rest, onSome: (at) => ({ ...rest, next_run_at: at }) }))
}

/**
 * Applies PATCH /v2/playbooks/{id}. Editing does not change the status: a deployed playbook stays
 * deployed with its new configuration. A changed schedule of a deployed playbook fires next after
 * `at`; an unchanged one keeps its pending firing.
 *
 * @since 0.1.0
 * @category utils
 */
export const applyUpdate = (record: PlaybookRecord, patch: UpdatePlaybookRequest, at: DateTime.Utc): PlaybookRecord => {
  const { chat_channel_id: storedChannel, cron_string: storedCron, dashboard: storedDashboard, ...rest } = record
  const cron = patch.cron_string === undefined ? storedCron : patch.cron_string.trim() || undefined
  const channel = patch.chat_channel_id === undefined ? storedChannel : patch.chat_channel_id.trim() || undefined
  const dashboard = patch.dashboard === undefined ? storedDashboard : patch.dashboard || undefined
  const updated = new PlaybookRecord({
    ...rest,
    name: patch.name ?? record.name,
    prompt: patch.prompt ?? record.prompt,
    connector_ids: patch.connector_ids === undefined ? record.connector_ids : Arr.dedupe(patch.connector_ids),
    dataset_ids: patch.dataset_ids === undefined ? record.dataset_ids : Arr.dedupe(patch.dataset_ids),
    email_addresses: patch.email_addresses === undefined
      ? record.email_addresses
      : Arr.dedupeWith(patch.email_addresses, (a, b) => a.toLowerCase() === b.toLowerCase()),
    tagged_chat_user_ids: patch.tagged_chat_user_ids === undefined
      ? record.tagged_chat_user_ids
      : Arr.dedupe(patch.tagged_chat_user_ids),
    selected_template_data_ids: patch.selected_template_data_ids === undefined
      ? record.selected_template_data_ids
      : Arr.dedupe(patch.selected_template_data_ids),
    ...(cron === undefined ? {} : { cron_string: cron }),
    ...(channel === undefined ? {} : { chat_channel_id: channel }),
    ...(dashboard === undefined ? {} : { dashboard }),
    updated_at: at
  })
  return updated.status === "deployed" && cron !== storedCron ? scheduled(updated, nextRunAt(updated, at)) : updated
}

/**
 * Deploys a playbook. The seed's deploy has no failure besides not found, so it succeeds from any
 * state; deploying again refreshes `deployed_at` and restarts the schedule from `at`.
 *
 * @since 0.1.0
 * @category utils
 */
export const deploy = (record: PlaybookRecord, at: DateTime.Utc): PlaybookRecord =>
  scheduled(
    new PlaybookRecord({ ...record, status: "deployed", deployed_at: at, updated_at: at }),
    nextRunAt(record, at)
  )

/**
 * Is a scheduled firing of this playbook due at `now`?
 *
 * @since 0.1.0
 * @category guards
 */
export const isDue = (record: PlaybookRecord, now: DateTime.Utc): boolean =>
  record.status === "deployed" &&
  record.next_run_at !== undefined &&
  DateTime.lessThanOrEqualTo(record.next_run_at, now)

/**
 * After a scheduled firing at `firedAt`: the schedule moves on to its next time.
 *
 * @since 0.1.0
 * @category utils
 */
export const advanceSchedule = (record: PlaybookRecord, firedAt: DateTime.Utc): PlaybookRecord =>
  scheduled(record, nextRunAt(record, firedAt))

/**
 * What stops a playbook from running (a dry run answers them, deploying refuses them), each a
 * sentence that names the field: a blank prompt (a playbook that delivers a dashboard needs none), an
 * address that cannot receive mail, a schedule that cannot fire. Connectors need the store and are
 * checked by `Playbooks`; the dashboard, by `PlaybookRuns` as it runs.
 *
 * @since 0.1.0
 * @category utils
 */
export const runProblems = (record: PlaybookRecord): ReadonlyArray<string> => [
  ...(record.prompt.trim().length > 0 || record.dashboard !== undefined
    ? []
    : [`playbook ${record.id} has no prompt: set one before running it`]),
  ...(record.email_addresses ?? []).filter((address) => !isEmailAddress(address)).map((address) =>
    `email_addresses: ${JSON.stringify(address)} is not an e-mail address`
  ),
  ...(record.cron_string === undefined ? [] : [cronIssue(record.cron_string)]).filter((issue) => issue !== true)
]

/**
 * Checks that a playbook can run (also what a dry run answers); the problems are joined with "; ".
 *
 * @since 0.1.0
 * @category utils
 */
export const validateRun = (record: PlaybookRecord): Either.Either<PlaybookRecord, InvalidRequest> => {
  const problems = runProblems(record)
  return problems.length === 0
    ? Either.right(record)
    : Either.left(new InvalidRequest({ message: problems.join("; ") }))
}

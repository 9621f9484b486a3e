/**
 * The playbooks use cases (`/v2/playbooks`): creating, listing, reading, configuring, deploying and
 * deleting playbooks, the checks of a run that need no agent, and the scheduler's view of due
 * playbooks.
 *
 * Who may reach a playbook is the policy engine's (`Policy.canRead`, `canWrite`, `canOwn`) over the
 * access described by `accessOf`: every playbook is visible to its whole organization (members list
 * and read each other's playbooks, as the hosted service shows them), and its creator owns it, so
 * only the creator configures, deploys, runs or deletes it. What an end user's key (one with client
 * attributes) makes is of its audience only (`Audience`), and such a key never deploys: a deployed
 * playbook fires as its owner, without the attributes.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Audience from "./Audience.js"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import { ChatChannelRepo } from "./ChatChannelRepo.js"
import type { SignAssetUrl } from "./Chats.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as Decision from "./Decision.js"
import type { InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { type OrganizationId, PlaybookId } from "./Ids.js"
import * as ChatChannelUse from "./internal/chatChannelUse.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import { served } from "./internal/servedReport.js"
import * as Playbook from "./Playbook.js"
import { PlaybookRepo } from "./PlaybookRepo.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The playbooks use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Playbooks extends Context.Tag("@sightline/core/Playbooks")<Playbooks, Playbooks.Service>() {}

export declare namespace Playbooks {
  /** What a successful run check hands to the run: the playbook as it will run. */
  export interface RunCheck {
    readonly playbook: Playbook.PlaybookRecord
    /** `dry_run` of the request: the checks are the same, the run issue decides what to skip. */
    readonly dryRun: boolean
  }

  /** A scheduled firing claimed by `claim`. */
  export interface Firing {
    /** The playbook as it fires (its schedule already moved on to the next time). */
    readonly playbook: Playbook.PlaybookRecord
    /** The firing time that was due: with the playbook id, the key that makes a firing unique. */
    readonly scheduledAt: DateTime.Utc
  }

  /**
   * The operations of `/v2/playbooks`. The caller comes first; every lookup is scoped to its
   * organization, and a playbook of another organization is `NotFound`.
   */
  export interface Service {
    /** `POST /v2/playbooks` (`playbook:write`): an empty `draft` owned by the caller. */
    readonly create: (
      principal: Policy.Principal
    ) => Effect.Effect<Playbook.Playbook, Unauthenticated | PermissionDenied>
    /** `GET /v2/playbooks` (`playbook:read`): the organization's playbooks, filtered, sorted and paged. */
    readonly list: (
      principal: Policy.Principal,
      query: Playbook.ListPlaybooksQuery
    ) => Effect.Effect<Playbook.ListPlaybooksResponse, Unauthenticated | PermissionDenied>
    /**
     * `GET /v2/playbooks/{id}` (`playbook:read`): the playbook and a page of its reports, newest
     * first, each image of their runs as an asset URL signed with `sign`.
     */
    readonly get: (
      principal: Policy.Principal,
      id: PlaybookId,
      query: Playbook.GetPlaybookQuery,
      sign: SignAssetUrl
    ) => Effect.Effect<Playbook.GetPlaybookResponse, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `PATCH /v2/playbooks/{id}` (`playbook:write`, editor access: the creator). Every `connector_ids`
     * entry must be a connector the caller can use (`InvalidRequest` naming the others).
     */
    readonly update: (
      principal: Policy.Principal,
      id: PlaybookId,
      request: Playbook.UpdatePlaybookRequest
    ) => Effect.Effect<Playbook.Playbook, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** `DELETE /v2/playbooks/{id}` (`playbook:write`, owner access): removes it with its reports. */
    readonly delete: (
      principal: Policy.Principal,
      id: PlaybookId
    ) => Effect.Effect<Playbook.DeletePlaybookResponse, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `POST /v2/playbooks/{id}/deploy` (`playbook:write`, editor access): from any state, once the
     * playbook could run (the checks of `validateRun`, else `InvalidRequest`).
     */
    readonly deploy: (
      principal: Policy.Principal,
      id: PlaybookId
    ) => Effect.Effect<
      Playbook.DeployPlaybookResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest
    >
    /**
     * The checks of `POST /v2/playbooks/{id}/run` that need no agent, the same for a dry run:
     * `playbook:write` with editor access (running spends money and delivers reports), a non-blank
     * prompt, deliverable targets, and every attached connector still usable by the caller (`InvalidRequest` with a
     * message that says which check failed).
     */
    readonly validateRun: (
      principal: Policy.Principal,
      id: PlaybookId,
      request: Playbook.RunPlaybookRequest
    ) => Effect.Effect<RunCheck, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /**
     * System operation for the scheduler (no principal, every organization): deployed playbooks whose
     * schedule is due at `now`, earliest first, at most `limit` (100 by default). Candidates only:
     * fire each through `claim`.
     */
    readonly due: (now: DateTime.Utc, limit?: number) => Effect.Effect<ReadonlyArray<Playbook.PlaybookRecord>>
    /**
     * System operation for the scheduler: re-reads a due playbook under its row lock and, if it is
     * still due, moves its schedule on and returns the firing; `None` when another process fired it
     * first, or it was edited, undeployed by deletion, or is not due. Missed firings collapse into
     * one: the next time is computed from `now`, not from the missed time.
     */
    readonly claim: (
      organizationId: OrganizationId,
      id: PlaybookId,
      now: DateTime.Utc
    ) => Effect.Effect<Option.Option<Firing>>
  }
}

// -----------------------------------------------------------------------------------------------
// Shared rules (also used by `Chats`)
// -----------------------------------------------------------------------------------------------

/**
 * Who may reach a playbook: everyone in its organization and its audience reads it (org-wide
 * `viewer`), its creator owns it. There are no per-playbook grants, so nobody else can change it.
 *
 * @since 0.1.0
 * @category utils
 */
export const accessOf = (playbook: Playbook.PlaybookRecord): Policy.ObjectAccess => ({
  organizationId: playbook.organization_id,
  ownerId: playbook.owner_id,
  audience: playbook.audience ?? Audience.none,
  isPublic: true,
  grants: []
})

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/**
 * The number of due playbooks `due` returns when no limit is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultDueLimit = 100

/**
 * Builds the playbooks use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const playbooks = yield* PlaybookRepo
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const connectors = yield* ConnectorRepo
  const channels = yield* ChatChannelRepo
  const auditor = yield* Auditor
  const audit = (
    principal: Policy.Principal,
    action: AuditLog.Action,
    id: PlaybookId,
    details: AuditLog.Details = {}
  ) => auditor.recordBy(principal, { action, resourceType: "playbook", resourceId: id, details })

  // The playbook, or `NotFound` when the organization has none with this id. `forUpdate` locks it
  // for the surrounding transaction.
  const find = (organizationId: OrganizationId, id: PlaybookId, forUpdate: boolean) =>
    Effect.flatMap(
      forUpdate ? playbooks.getForUpdate(organizationId, id) : playbooks.get(organizationId, id),
      Option.match({
        onNone: () => Effect.fail(new Errors.NotFound()),
        onSome: Effect.succeed
      })
    )

  const create = Traced.fn("Playbooks.create")(function*(principal: Policy.Principal) {
    yield* Decision.enforce(Policy.requirePermission(principal, "playbook:write"))
    const playbook = Playbook.make({
      id: PlaybookId.make(yield* ids.uuid),
      organizationId: principal.organizationId,
      ownerId: principal.memberId,
      audience: Policy.audienceOf(principal),
      at: yield* DateTime.now
    })
    // A fresh UUID that clashes is a broken generator, not something a client can fix.
    yield* tx.withTransaction(Effect.zipRight(
      Effect.orDie(playbooks.create(playbook)),
      audit(principal, "playbook.create", playbook.id)
    ))
    return Playbook.toPlaybook(playbook)
  })

  const list = Traced.fn("Playbooks.list")(
    function*(principal: Policy.Principal, query: Playbook.ListPlaybooksQuery) {
      // Every playbook is visible to the whole organization in its audience, so the permission and
      // the audience are the only checks.
      yield* Decision.enforce(Policy.requirePermission(principal, "playbook:read"))
      const page = yield* playbooks.list(principal.organizationId, {
        limit: query.limit,
        offset: query.offset,
        searchTerm: query.search_term,
        sortBy: query.sort_by,
        sortDirection: query.sort_direction,
        status: query.status_filter,
        audience: Policy.audienceOf(principal)
      })
      return { playbooks: page.rows.map(Playbook.toPlaybook), total_count: page.totalCount }
    }
  )

  const get = Traced.fn("Playbooks.get")(
    function*(principal: Policy.Principal, id: PlaybookId, query: Playbook.GetPlaybookQuery, sign: SignAssetUrl) {
      // One read: the page of reports is read before the check, and dropped with the playbook when
      // the caller may not read it.
      const found = yield* playbooks.getWithReports(principal.organizationId, id, {
        limit: query.limit,
        offset: query.offset
      })
      if (Option.isNone(found)) return yield* new Errors.NotFound()
      const { page, playbook } = found.value
      const now = yield* DateTime.now
      yield* Decision.enforce(Policy.canRead(principal, "playbook", accessOf(playbook), now))
      // A report holds what the playbook's connectors answered (and signed chart URLs): a caller who
      // may not use every one of them reads the playbook without its reports, as agents hide runs.
      const hidden = (yield* ConnectorUse.unusable(connectors, principal, playbook.connector_ids, now)).length > 0
      return {
        playbook: Playbook.toPlaybook(playbook),
        reports: hidden ? [] : yield* Effect.forEach(page.reports, (report) => served(report, sign)),
        total_reports_count: hidden ? 0 : page.totalCount
      }
    }
  )

  const update = Traced.fn("Playbooks.update")(
    function*(principal: Policy.Principal, id: PlaybookId, request: Playbook.UpdatePlaybookRequest) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const playbook = yield* find(principal.organizationId, id, true)
        yield* Decision.enforce(
          Policy.canWrite(principal, "playbook", accessOf(playbook), now)
        )
        // Every id sent is checked, kept ones included: the playbook runs with what is attached, so
        // the list a caller saves must be one it could run.
        if (request.connector_ids !== undefined) {
          yield* ConnectorUse.requireUsable(connectors, principal, request.connector_ids, now, "invalid connector_ids")
        }
        // `""` clears the channel; anything else must be one of the organization's.
        const channel = request.chat_channel_id?.trim()
        yield* ChatChannelUse.require(channels, principal.organizationId, channel === "" ? undefined : channel)
        const updated = Playbook.applyUpdate(playbook, request, now)
        // Locked and found above, so the row is still there.
        yield* Effect.orDie(playbooks.update(updated))
        yield* audit(principal, "playbook.update", id, { fields: Object.keys(request).sort() })
        return Playbook.toPlaybook(updated)
      }))
    }
  )

  const remove = Traced.fn("Playbooks.delete")(function*(principal: Policy.Principal, id: PlaybookId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const now = yield* DateTime.now
      const playbook = yield* find(principal.organizationId, id, true)
      yield* Decision.enforce(
        Policy.canOwn(principal, "playbook", accessOf(playbook), now)
      )
      yield* Effect.orDie(playbooks.delete(principal.organizationId, id))
      yield* audit(principal, "playbook.delete", id, { name: playbook.name })
      return { playbook_id: id, deleted_at: now }
    }))
  })

  const deploy = Traced.fn("Playbooks.deploy")(function*(principal: Policy.Principal, id: PlaybookId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const now = yield* DateTime.now
      const playbook = yield* find(principal.organizationId, id, true)
      yield* Decision.enforce(
        Policy.canWrite(principal, "playbook", accessOf(playbook), now)
      )
      // A deployed playbook fires on its own, as its owner: never for an end user's key.
      yield* Decision.enforce(Policy.canRunUnattended(principal))
      // One that could not run is refused here, not at 9 am.
      yield* requireRunnable(principal, playbook, now)
      const deployed = Playbook.deploy(playbook, now)
      yield* Effect.orDie(playbooks.update(deployed))
      yield* audit(
        principal,
        "playbook.deploy",
        id,
        deployed.cron_string === undefined ? {} : { cron_string: deployed.cron_string }
      )
      return { playbook_id: id, deployed_at: now }
    }))
  })

  // Every reason the playbook cannot run, in one `InvalidRequest` (a dry run answers them all at
  // once). A connector deleted or unshared since it was attached would fail the run half-way; a run
  // without connectors is fine (the agent still has the ontology and the web).
  const requireRunnable = (principal: Policy.Principal, playbook: Playbook.PlaybookRecord, now: DateTime.Utc) =>
    Effect.gen(function*() {
      const problems = [...Playbook.runProblems(playbook)]
      const channel = playbook.chat_channel_id
      const channelProblem = channel === undefined
        ? undefined
        : yield* ChatChannelUse.problem(channels, playbook.organization_id, channel)
      if (channelProblem !== undefined) problems.push(channelProblem)
      const unusable = yield* ConnectorUse.unusable(connectors, principal, playbook.connector_ids, now)
      if (unusable.length > 0) {
        problems.push(
          ConnectorUse.unusableMessage(
            `playbook ${playbook.id} cannot run: remove or regain access to its connectors`,
            unusable
          )
        )
      }
      if (problems.length > 0) return yield* new Errors.InvalidRequest({ message: problems.join("; ") })
    })

  const validateRun = Traced.fn("Playbooks.validateRun")(
    function*(principal: Policy.Principal, id: PlaybookId, request: Playbook.RunPlaybookRequest) {
      const now = yield* DateTime.now
      const playbook = yield* find(principal.organizationId, id, false)
      yield* Decision.enforce(
        Policy.canWrite(principal, "playbook", accessOf(playbook), now)
      )
      yield* requireRunnable(principal, playbook, now)
      return { playbook, dryRun: request.dry_run }
    }
  )

  const due = Traced.fn("Playbooks.due")(function*(now: DateTime.Utc, limit: number = defaultDueLimit) {
    return yield* playbooks.listDue(now, limit)
  })

  const claim = Traced.fn("Playbooks.claim")(
    function*(organizationId: OrganizationId, id: PlaybookId, now: DateTime.Utc) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const locked = yield* playbooks.getForUpdate(organizationId, id)
        if (Option.isNone(locked) || !Playbook.isDue(locked.value, now)) return Option.none<Playbooks.Firing>()
        const playbook = locked.value
        const advanced = Playbook.advanceSchedule(playbook, now)
        yield* Effect.orDie(playbooks.update(advanced))
        // `isDue` holds, so the playbook has a pending firing time.
        return Option.some({ playbook: advanced, scheduledAt: playbook.next_run_at! })
      }))
    }
  )

  return Playbooks.of({ create, list, get, update, delete: remove, deploy, validateRun, due, claim })
})

/**
 * The playbooks use cases over `PlaybookRepo`, `ConnectorRepo`, `Transaction` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Playbooks,
  never,
  PlaybookRepo | ConnectorRepo | ChatChannelRepo | Auditor | Transaction | IdGenerator
> = Layer.effect(Playbooks, make)

/**
 * The library change use cases: file a change from staged sandbox edits (Create Library Change),
 * list, get, approve (and merge), deny and restore (`/v2/changes`).
 *
 * Who may do what is decided by `Owners` and `Approval` over the OWNERS tree of **main** as it is
 * when the operation runs, never the tree a change proposes. The change state machine is `Change`'s;
 * this module runs it inside transactions that lock the change row (`getForUpdate`), so concurrent
 * approvers queue up: each sees the approvals before it, and exactly one merges.
 *
 * Approvals are stored per member and revision; whether they count is evaluated each time with the
 * approvers' live roles, so a reviewer who lost their authority stops counting at once.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Approval from "./Approval.js"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import * as Change from "./Change.js"
import * as ChangeCheck from "./ChangeCheck.js"
import * as ChangeChecks from "./ChangeChecks.js"
import * as ChangeEvaluation from "./ChangeEvaluation.js"
import { ChangeRepo } from "./ChangeRepo.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as Decision from "./Decision.js"
import { Conflict, InvalidRequest, NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { ChangeId, type ChatId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import { JobQueue } from "./JobQueue.js"
import { Library } from "./Library.js"
import * as LibraryLib from "./Library.js"
import { LibraryStore } from "./LibraryStore.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Owners from "./Owners.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * What the sandbox endpoint files as a change (`POST /v2/sandcastles/{id}/library/changes`).
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateInput {
  /** The decoded request body. */
  readonly body: Change.CreateLibraryChange
  /** The commit the sandbox mounted and the edits are relative to; none for the empty library. */
  readonly baseRef: Option.Option<string>
  /** What is staged in the sandbox (see `Library.Edits`). */
  readonly edits: LibraryLib.Edits
  /** The chat the sandbox belongs to, when any. */
  readonly chatId?: ChatId | undefined
  /** Edits made by the agent rather than typed by a person (default false). */
  readonly aiGenerated?: boolean | undefined
}

/**
 * Files, lists, reviews and merges library changes.
 *
 * @since 0.1.0
 * @category services
 */
export class Changes extends Context.Tag("@sightline/core/Changes")<Changes, Changes.Service>() {}

export declare namespace Changes {
  /** The library change operations (permissions `change:read` / `change:write`, then OWNERS). */
  export interface Service {
    /**
     * Files staged edits as a new change, or as a new revision of `body.change_number` (its author
     * only). Nothing staged, invalid paths or a malformed OWNERS file are `invalid_request`; an edit
     * to a path the caller may not read is `not_found`; revising an approved or denied change is a
     * `conflict`. The change is `reserved` when it conflicts with main, merged at once (`approved`)
     * when an auto-approve rule matches every path and it is not a draft, else `draft` or `open`.
     */
    readonly create: (
      principal: Policy.Principal,
      input: CreateInput
    ) => Effect.Effect<
      Change.LibraryChangeResult,
      InvalidRequest | PermissionDenied | NotFound | Conflict | Unauthenticated
    >
    /** A page of the changes whose every touched path the caller may read, with per-status counts. */
    readonly list: (
      principal: Policy.Principal,
      query: Change.ListChangesQuery
    ) => Effect.Effect<Change.ListChangesResponse, InvalidRequest | PermissionDenied | Unauthenticated>
    /** One change with the diffs of its current (or the asked) revision and the caller's capabilities. */
    readonly get: (
      principal: Policy.Principal,
      id: ChangeId,
      query: Change.GetChangeQuery
    ) => Effect.Effect<Change.Change, PermissionDenied | NotFound | Unauthenticated>
    /**
     * Records the caller's approval of the current revision and merges the change into main once the
     * counted approvals meet the requirement. A stale ref or a change that is not open or draft is a
     * `conflict`. When main moved so that the merge now conflicts, the change becomes `reserved`
     * (its author resubmits) and the answer is `merged: false`.
     */
    readonly approve: (
      principal: Policy.Principal,
      id: ChangeId,
      body: Change.ExpectedGitRef
    ) => Effect.Effect<Change.ApproveResult, PermissionDenied | NotFound | Conflict | Unauthenticated>
    /** Denies an open or draft change (its author, or write authority on every touched path). */
    readonly deny: (
      principal: Policy.Principal,
      id: ChangeId,
      body: Change.ExpectedGitRef
    ) => Effect.Effect<Change.ActionResult, PermissionDenied | NotFound | Conflict | Unauthenticated>
    /** Reopens a denied change at the same revision and git ref (the same people who may deny it). */
    readonly restore: (
      principal: Policy.Principal,
      id: ChangeId,
      body: Change.ExpectedGitRef
    ) => Effect.Effect<Change.ActionResult, PermissionDenied | NotFound | Conflict | Unauthenticated>
  }
}

const fromEither = <A>(either: Either.Either<A, Conflict>): Effect.Effect<A, Conflict> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

const reviewable = (change: Change.ChangeRecord) => change.status === "open" || change.status === "draft"

// Another change moved main between this transaction's read of it and its compare-and-set: the
// transaction is rolled back and run again (`landingTransaction`), so it never reaches a caller
// unless main keeps moving.
class MainMoved extends Data.TaggedError("MainMoved")<{ readonly conflict: Conflict }> {}

/** How many times a merge is retried when other changes keep landing on main first. */
const MAIN_MOVED_RETRIES = 5

/**
 * Builds the service from the change repository, the library store, `Library` and transactions.
 *
 * @since 0.1.0
 * @category constructors
 */
/** The ids an outbound event about a change names. */
const changeData = (change: Change.ChangeRecord) => ({ change_id: change.id, change_number: String(change.number) })

export const make = Effect.gen(function*() {
  const repo = yield* ChangeRepo
  const store = yield* LibraryStore
  const library = yield* Library
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const auditor = yield* Auditor
  const events = yield* OutboundEvents
  // Without a deployment's checkers (unit tests of other rules), changes merge on approvals alone.
  const checks = Option.match(yield* Effect.serviceOption(ChangeChecks.ChangeChecks), {
    onNone: (): ChangeChecks.Checker => () => Effect.succeed([]),
    onSome: (service) => service.check
  })
  const jobs = yield* JobQueue
  const connectors = yield* ConnectorRepo

  // What a reader sees of the checks: those on a connector it may not use say only how they came
  // out, since their names and messages carry that connector's name and its database's words (the
  // checks at approval run on the approver's connectors, which the author may not use).
  const forReader = Effect.fnUntraced(function*(
    principal: Policy.Principal,
    records: ReadonlyArray<Change.ChangeRecord>
  ) {
    const ids = [...new Set(records.flatMap((r) => r.checks.flatMap((c) => c.connector_id ?? [])))]
    if (ids.length === 0) return records
    const hidden = new Set(yield* ConnectorUse.unusable(connectors, principal, ids, yield* DateTime.now))
    const hides = (check: ChangeCheck.Check) => check.connector_id !== undefined && hidden.has(check.connector_id)
    return records.map((record) =>
      record.checks.some(hides)
        ? new Change.ChangeRecord({
          ...record,
          checks: record.checks.map((check) => hides(check) ? ChangeCheck.withoutConnector(check) : check)
        })
        : record
    )
  })

  /** Whether main's OWNERS rules require the change's evaluation check to pass before it merges. */
  const requiresEvaluation = (tree: Owners.OwnersTree, author: Owners.Caller, paths: ReadonlyArray<string>) =>
    Approval.requiredChecks(tree, author, paths).includes("evaluations")

  /** The change as served: a required evaluation is judged by main's rules as they are now. */
  const withRequirement = (change: Change.ChangeRecord, required: boolean) =>
    change.evaluation === undefined || change.evaluation.required === required
      ? change
      : Change.recordEvaluation(change, new ChangeEvaluation.Evaluation({ ...change.evaluation, required }))

  // Stored commits never disappear, so a ref the repository holds that the store lacks is a broken
  // store, not something a caller can cause.
  const storeDefect = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
    Effect.catchIf(effect, (e): e is Extract<E, NotFound> => e._tag === "NotFound", Effect.die)

  /** A change the caller may see: it exists in the caller's organization and every path is readable. */
  const visible = (change: Option.Option<Change.ChangeRecord>, tree: Owners.OwnersTree, caller: Owners.Caller) =>
    Option.match(change, {
      onNone: () => Effect.fail(new NotFound()),
      onSome: (c) => Effect.as(Decision.enforce(LibraryLib.readsAll(tree, caller, c.touched_paths)), c)
    })

  /**
   * What `Approval` needs: main's tree, the author and every approver with their live roles. An
   * approver who left (or was deleted) is dropped: they hold no authority any more. A departed
   * author keeps their identity (self-approval rules still recognise them) but no roles.
   */
  const factsOf = Effect.fnUntraced(function*(change: Change.ChangeRecord, tree: Owners.OwnersTree) {
    const approvals = yield* repo.approvals(change.organization_id, change.id)
    const callers = yield* library.liveCallers(change.organization_id, [
      change.author_id,
      ...approvals.map((a) => a.approver_id)
    ])
    const author = Option.getOrElse(HashMap.get(callers, change.author_id), (): Owners.Caller => ({
      memberId: change.author_id,
      email: change.author_email,
      roleNames: [],
      isAdmin: false
    }))
    return {
      tree,
      touchedPaths: change.touched_paths,
      author,
      revision: change.revision,
      approvals: approvals.flatMap((a) =>
        Option.match(HashMap.get(callers, a.approver_id), {
          onNone: () => [],
          onSome: (approver) => [{ revision: a.revision, approver }]
        })
      )
    } satisfies Approval.ChangeFacts
  })

  /**
   * Lands merged files on main: refuses a result with a malformed OWNERS file (two clean edits can
   * still merge into one, say with `inherit:` twice), then commits on top of the head it was merged
   * against and moves main by compare-and-set, so a concurrent merge of another change is a
   * `conflict` for the later one instead of a lost update.
   */
  const land = Effect.fnUntraced(function*(
    change: Change.ChangeRecord,
    head: Option.Option<string>,
    files: LibraryLib.Files
  ) {
    const parsed = Owners.fromSnapshot(files)
    if (Either.isLeft(parsed)) {
      return yield* new Conflict({ message: `change ${change.number} cannot merge: ${parsed.left.message}` })
    }
    // Merged paths come from stored commits (already valid) and the parent is main: nothing here
    // can fail but a broken store.
    const ref = yield* Effect.orDie(store.commit(change.organization_id, {
      ...(Option.isSome(head) ? { parent: head.value } : {}),
      message: `Merge change ${change.number}: ${change.title}`,
      author: change.author_id,
      files
    }))
    yield* storeDefect(store.setHead(change.organization_id, head, ref)).pipe(
      Effect.catchTag("Conflict", (conflict) => Effect.fail(new MainMoved({ conflict })))
    )
    yield* events.publish(change.organization_id, "change.merged", changeData(change))
  })

  /**
   * Runs a transaction that may land a change on main, again from the start when another change
   * landed first: its rollback undid everything, so the retry re-reads main and re-evaluates.
   * Approvals of different changes arriving together then all merge instead of all but one failing.
   */
  const landingTransaction = <A, E, R>(effect: Effect.Effect<A, E | MainMoved, R>) =>
    tx.withTransaction(effect).pipe(
      Effect.retry({ while: (e) => e instanceof MainMoved, times: MAIN_MOVED_RETRIES }),
      Effect.catchIf((e): e is MainMoved => e instanceof MainMoved, (e) => Effect.fail(e.conflict))
    )

  /** Merges the change's current revision into main as it is now, or reports the conflicts. */
  const mergeNow = (change: Change.ChangeRecord, head: Option.Option<string>) =>
    storeDefect(store.merge(change.organization_id, Option.fromNullable(change.base_ref), head, change.git_ref))

  const create = Traced.fn("Changes.create")(function*(principal: Policy.Principal, input: CreateInput) {
    yield* Decision.enforce(Policy.requirePermission(principal, "change:write"))
    const { body } = input
    const organizationId = principal.organizationId
    return yield* landingTransaction(Effect.gen(function*() {
      const staged = yield* library.stage(principal, input.baseRef, input.edits)
      if (staged.touchedPaths.length === 0) {
        return yield* new InvalidRequest({ message: "nothing is staged: the library has no changes to file" })
      }
      // A malformed OWNERS file could never be evaluated once merged, so it is refused at filing.
      const parsed = Owners.fromSnapshot(staged.files)
      if (Either.isLeft(parsed)) return yield* new InvalidRequest({ message: parsed.left.message })

      const main = yield* library.main(organizationId)
      const caller = yield* library.callerOf(principal)

      // The change being revised, locked so that a concurrent approval waits for the new revision.
      const existing = body.change_number === undefined ? Option.none() : Option.some(
        yield* Effect.flatMap(
          repo.getByNumber(organizationId, body.change_number),
          Option.match({
            onNone: () => Effect.fail(new NotFound()),
            onSome: (found) =>
              Effect.flatMap(repo.getForUpdate(organizationId, found.id), (c) => visible(c, main.tree, caller))
          })
        )
      )
      if (Option.isSome(existing) && existing.value.author_id !== principal.memberId) {
        return yield* new PermissionDenied({ message: "only the author of a change may file a new revision of it" })
      }
      if (Option.isNone(existing) && (body.title === undefined || body.description === undefined)) {
        return yield* new InvalidRequest({ message: "title and description are required for a new change" })
      }

      const gitRef = yield* storeDefect(store.commit(organizationId, {
        ...(Option.isSome(input.baseRef) ? { parent: input.baseRef.value } : {}),
        message: body.title ?? Option.match(existing, { onNone: () => "", onSome: (c) => c.title }),
        author: principal.memberId,
        changes: input.edits
      }))
      const merge = yield* storeDefect(store.merge(organizationId, input.baseRef, main.head, gitRef))
      const hasConflicts = merge._tag === "Conflicted"
      const author = Option.getOrElse(
        HashMap.get(yield* library.liveCallers(organizationId, [principal.memberId]), principal.memberId),
        () => caller
      )
      const requirement = Approval.requirement(main.tree, author, staged.touchedPaths)
      // Checked on what would land: the merge with main as it is now (the change's own snapshot
      // when that conflicts).
      const checked = yield* checks({
        principal,
        organizationId,
        files: merge._tag === "Clean" ? merge.files : staged.files,
        touchedPaths: staged.touchedPaths
      })
      // Auto-approval is judged with the roles the caller acts with now (a narrowed key gets no
      // shortcut through a role it did not assume), never for a draft (its author said it is not
      // ready, so it waits for the revision that opens it), and never past a failed check.
      // A folder that requires the evaluation check takes no shortcut past it either.
      const evaluationRequired = requiresEvaluation(main.tree, author, staged.touchedPaths)
      const autoApproved = !hasConflicts && !body.draft && !ChangeCheck.failing(checked) && !evaluationRequired &&
        Approval.autoApproves(main.tree, caller, staged.touchedPaths)
      const now = yield* DateTime.now
      // The evaluation check runs after the filing, on the worker; a key bound to client attributes
      // gets none, since the check asks as its member's session, which would not keep to them.
      const revision = Option.match(existing, { onNone: () => 1, onSome: (c) => c.revision + 1 })
      // A folder whose rule requires it gets one whatever the change touches: it could never merge else.
      const evaluation = autoApproved || !(evaluationRequired || staged.touchedPaths.some(ChangeEvaluation.evaluates))
        ? undefined
        : Policy.clientAttributesJson(principal) === "{}"
        ? ChangeEvaluation.queued(revision, evaluationRequired, now)
        : ChangeEvaluation.skipped(
          ChangeEvaluation.queued(revision, evaluationRequired, now),
          "filed with a key bound to client attributes: the check asks as the author's session, which would not keep to them",
          now
        )
      const filing = {
        draft: body.draft,
        hasConflicts,
        autoApproved,
        gitRef,
        baseRef: Option.getOrUndefined(input.baseRef),
        touchedPaths: staged.touchedPaths,
        requiredApprovals: requirement.approvals,
        checks: checked,
        evaluation,
        now
      }

      const record = yield* Option.match(existing, {
        onNone: () =>
          Effect.gen(function*() {
            const created = Change.make({
              ...filing,
              id: ChangeId.make(yield* ids.uuid),
              organizationId,
              number: yield* repo.nextNumber(organizationId),
              authorId: principal.memberId,
              authorEmail: caller.email ?? "",
              title: body.title ?? "",
              description: body.description ?? "",
              aiGenerated: input.aiGenerated ?? false,
              chatId: input.chatId
            })
            // Numbers come from `nextNumber`, so a clash is a broken repository.
            yield* Effect.orDie(repo.create(created))
            return created
          }),
        onSome: (current) =>
          Effect.gen(function*() {
            const revised = yield* fromEither(Change.revise(current, {
              ...filing,
              title: body.title,
              description: body.description
            }))
            yield* repo.update(revised)
            return revised
          })
      })
      yield* Effect.orDie(repo.addRevision(
        new Change.Revision({
          organization_id: organizationId,
          change_id: record.id,
          revision: record.revision,
          git_ref: gitRef,
          ...(Option.isSome(input.baseRef) ? { base_ref: input.baseRef.value } : {}),
          touched_paths: staged.touchedPaths,
          created_at: now
        })
      ))

      if (evaluation?.status === "queued") yield* jobs.enqueue(ChangeEvaluation.job(record))
      // Opened: filed for review, or a draft its author now marks ready.
      if (
        record.status !== "draft" &&
        Option.match(existing, { onNone: () => true, onSome: (previous) => previous.status === "draft" })
      ) {
        yield* events.publish(organizationId, "change.opened", changeData(record))
      }

      // The auto-approve rules were just read from main inside this transaction, so the
      // re-validation at merge is the check above; `land` still refuses a malformed OWNERS result.
      if (autoApproved && merge._tag === "Clean") yield* land(record, main.head, merge.files)

      return new Change.LibraryChangeResult({
        change_id: record.id,
        change_number: record.number,
        status: Change.initialStatus(filing),
        git_ref: gitRef,
        has_conflicts: hasConflicts,
        ...(merge._tag === "Conflicted" ? { conflicts: merge.view } : {}),
        auto_approved: autoApproved,
        diffs: staged.diff.diffs,
        raw_diff: staged.diff.raw_diff,
        checks: checked
      })
    }))
  })

  const list = Traced.fn("Changes.list")(function*(principal: Policy.Principal, query: Change.ListChangesQuery) {
    yield* Decision.enforce(Policy.requirePermission(principal, "change:read"))
    const after = query.page_token === undefined
      ? undefined
      : yield* Pagination.decodeCursor(query.page_token, Schema.UUID)
    const main = yield* library.main(principal.organizationId)
    const caller = yield* library.callerOf(principal)
    const filter = {
      includeAutoApproved: query.include_auto_approved,
      readable: (change: Change.ChangeRecord) =>
        Decision.isAllow(LibraryLib.readsAll(main.tree, caller, change.touched_paths))
    }
    const page = yield* repo.list(principal.organizationId, {
      ...filter,
      statuses: query.status,
      limit: query.page_size,
      after
    })
    const counts = yield* repo.counts(principal.organizationId, filter)
    return {
      changes: (yield* forReader(principal, page.items)).map((record) => Change.toChange(record)),
      ...(page.nextCursor === undefined ? {} : { next_page_token: page.nextCursor }),
      counts
    } satisfies Change.ListChangesResponse
  })

  const get = Traced.fn("Changes.get")(
    function*(principal: Policy.Principal, id: ChangeId, query: Change.GetChangeQuery) {
      yield* Decision.enforce(Policy.requirePermission(principal, "change:read"))
      const main = yield* library.main(principal.organizationId)
      const caller = yield* library.callerOf(principal)
      const change = yield* visible(yield* repo.get(principal.organizationId, id), main.tree, caller)
      const wanted = query.revision ?? change.revision
      const revision = (yield* repo.revisions(principal.organizationId, id)).find((r) => r.revision === wanted)
      if (revision === undefined) return yield* new NotFound()
      // An older revision may have touched other paths than the current one.
      yield* Decision.enforce(LibraryLib.readsAll(main.tree, caller, revision.touched_paths))
      const diff = yield* storeDefect(
        store.diff(principal.organizationId, Option.fromNullable(revision.base_ref), revision.git_ref)
      )
      const facts = yield* factsOf(change, main.tree)
      const evaluation = Approval.evaluate(facts, caller)
      const open = reviewable(change)
      // Counts of a change under review are evaluated now (roles and main's OWNERS may have moved);
      // those of a settled change stay as they were when it settled.
      const counted = open
        ? withRequirement(
          new Change.ChangeRecord({
            ...change,
            approval_count: evaluation.approvalCount,
            required_approvals: evaluation.requiredApprovals
          }),
          requiresEvaluation(main.tree, facts.author, change.touched_paths)
        )
        : change
      // The actions also need `change:write`: a read-only caller is never offered them.
      const mayAct = Policy.hasPermission(principal, "change:write")
      const [shown] = yield* forReader(principal, [counted])
      return Change.toChange(shown!, {
        diffs: diff.diffs,
        capabilities: new Change.Capabilities({
          can_approve: open && mayAct && Decision.isAllow(evaluation.canApprove),
          can_deny: open && mayAct && Decision.isAllow(evaluation.canDeny),
          can_restore: change.status === "denied" && mayAct && Decision.isAllow(evaluation.canRestore),
          caller_approved: evaluation.callerApproved
        })
      })
    }
  )

  /** Loads and locks a change for a review action, with main's tree and the caller, or `not_found`. */
  const forReview = Effect.fnUntraced(function*(principal: Policy.Principal, id: ChangeId) {
    yield* Decision.enforce(Policy.requirePermission(principal, "change:write"))
    const main = yield* library.main(principal.organizationId)
    const caller = yield* library.callerOf(principal)
    const change = yield* visible(yield* repo.getForUpdate(principal.organizationId, id), main.tree, caller)
    return { main, caller, change, facts: yield* factsOf(change, main.tree) }
  })

  const recordAction = (
    principal: Policy.Principal,
    change: Change.ChangeRecord,
    action: "change.approve" | "change.deny" | "change.restore",
    details: AuditLog.Details = {}
  ) =>
    auditor.recordBy(principal, {
      action,
      resourceType: "change",
      resourceId: change.id,
      details: { number: change.number, revision: change.revision, git_ref: change.git_ref, ...details }
    })

  const approve = Traced.fn("Changes.approve")(
    function*(principal: Policy.Principal, id: ChangeId, body: Change.ExpectedGitRef) {
      return yield* landingTransaction(Effect.gen(function*() {
        const { caller, change, facts, main } = yield* forReview(principal, id)
        yield* Decision.enforce(Approval.canApprove(facts, caller))
        yield* fromEither(Change.startApproval(change, body.expected_git_ref))
        const now = yield* DateTime.now
        const { alreadyApproved } = yield* repo.addApproval(
          new Change.ApprovalRecord({
            organization_id: change.organization_id,
            change_id: change.id,
            revision: change.revision,
            approver_id: principal.memberId,
            created_at: now
          })
        )
        const evaluation = Approval.evaluate(yield* factsOf(change, main.tree), caller)
        let updated = Change.recordApproval(change, {
          approvalCount: evaluation.approvalCount,
          requiredApprovals: evaluation.requiredApprovals,
          merged: false,
          now
        })
        let merged = false
        let blockedBy: string | undefined
        const evaluationRequired = requiresEvaluation(main.tree, facts.author, change.touched_paths)
        updated = withRequirement(updated, evaluationRequired)
        // This evaluation is the re-validation at merge: it reads main's OWNERS and the approvers'
        // live roles inside the transaction that moves main, so nothing can change in between.
        if (
          evaluation.mergeable && evaluationRequired && !ChangeEvaluation.passes(change.evaluation, change.revision)
        ) {
          // Approved by its reviewers; it merges on an approval once its check has passed.
          blockedBy = ChangeEvaluation.blockedMessage(change.evaluation)
        } else if (evaluation.mergeable) {
          const merge = yield* mergeNow(change, main.head)
          if (merge._tag === "Clean") {
            // Checked again on what lands now (main may have moved since the filing); a failed
            // check leaves the change approved by its reviewers but unmerged, saying why.
            const checked = yield* checks({
              principal,
              organizationId: change.organization_id,
              files: merge.files,
              touchedPaths: change.touched_paths
            })
            updated = Change.recordChecks(updated, checked, now)
            if (ChangeCheck.failing(checked)) {
              blockedBy = "a check failed on what would merge: see checks"
            } else {
              yield* land(change, main.head, merge.files)
              merged = true
              updated = Change.recordApproval(updated, {
                approvalCount: evaluation.approvalCount,
                requiredApprovals: evaluation.requiredApprovals,
                merged: true,
                now
              })
            }
          } else {
            updated = Change.reserve(updated, now)
          }
        }
        yield* repo.update(updated)
        yield* recordAction(principal, change, "change.approve", { merged, status: updated.status })
        return new Change.ApproveResult({
          merged,
          approval_count: evaluation.approvalCount,
          required_approvals: evaluation.requiredApprovals,
          already_approved: alreadyApproved,
          ...(blockedBy === undefined ? {} : { blocked_by: blockedBy })
        })
      }))
    }
  )

  const deny = Traced.fn("Changes.deny")(
    function*(principal: Policy.Principal, id: ChangeId, body: Change.ExpectedGitRef) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const { caller, change, facts } = yield* forReview(principal, id)
        yield* Decision.enforce(Approval.canDeny(facts, caller))
        yield* repo.update(yield* fromEither(Change.deny(change, body.expected_git_ref, yield* DateTime.now)))
        yield* recordAction(principal, change, "change.deny")
        yield* events.publish(change.organization_id, "change.denied", changeData(change))
        return { success: true }
      }))
    }
  )

  const restore = Traced.fn("Changes.restore")(
    function*(principal: Policy.Principal, id: ChangeId, body: Change.ExpectedGitRef) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const { caller, change, facts } = yield* forReview(principal, id)
        yield* Decision.enforce(Approval.canRestore(facts, caller))
        yield* repo.update(yield* fromEither(Change.restore(change, body.expected_git_ref, yield* DateTime.now)))
        yield* recordAction(principal, change, "change.restore")
        return { success: true }
      }))
    }
  )

  return Changes.of({ create, list, get, approve, deny, restore })
})

/**
 * The `Changes` service over the ports in context and `Library`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Changes,
  never,
  | ChangeRepo
  | ConnectorRepo
  | LibraryStore
  | Library
  | Transaction
  | IdGenerator
  | Auditor
  | JobQueue
  | OutboundEvents
> = Layer.effect(Changes, make)

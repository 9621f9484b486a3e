/**
 * Reviewable changes to the Context Library: the resource, its wire shapes, its request schemas and
 * its lifecycle.
 *
 * The lifecycle functions are pure: they take a stored record and return the next one, or a
 * `Conflict` that says why the move is illegal. Use cases combine them with the approval evaluation
 * (`Approval.ts`) and the ports (`ChangeRepo`, `LibraryStore`).
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ChangeCheck from "./ChangeCheck.js"
import * as ChangeEvaluation from "./ChangeEvaluation.js"
import { Conflict } from "./Errors.js"
import { ChangeId, ChatId, MemberId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"

/** A 32-bit signed integer, as the spec's `int32` fields are. */
const Int32 = Schema.Int.pipe(Schema.between(-2147483648, 2147483647))

/**
 * A change number: positive and unique per organization.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangeNumber = Int32.pipe(Schema.positive())

/**
 * The statuses of a change (`reserved`: filed with merge conflicts; `approved`: merged).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangeStatus = Schema.Literal("reserved", "draft", "open", "approved", "denied")
export type ChangeStatus = typeof ChangeStatus.Type

/**
 * The statuses a Create Library Change can answer with (never `denied`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LibraryChangeStatus = Schema.Literal("open", "draft", "approved", "reserved")
export type LibraryChangeStatus = typeof LibraryChangeStatus.Type

/**
 * The longest title the spec allows.
 *
 * @since 0.1.0
 * @category constants
 */
export const titleMaxLength = 50

/**
 * A change title: at most 50 characters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Title = Schema.String.pipe(Schema.maxLength(titleMaxLength, {
  message: () => `title must be at most ${titleMaxLength} characters`
}))

/**
 * One file of a diff. Like GitLab's diff entries, a new or deleted file carries its path in both
 * `old_path` and `new_path`; `name` is the file name (last path segment).
 *
 * @since 0.1.0
 * @category models
 */
export class Diff extends Schema.Class<Diff>("@sightline/core/Change/Diff")({
  name: Schema.String,
  old_path: Schema.String,
  new_path: Schema.String,
  additions: Schema.NonNegativeInt,
  deletions: Schema.NonNegativeInt,
  is_new: Schema.Boolean,
  is_delete: Schema.Boolean,
  is_rename: Schema.Boolean,
  is_binary: Schema.Boolean
}) {}

/**
 * What the caller may do with a change (Get Change).
 *
 * @since 0.1.0
 * @category models
 */
export class Capabilities extends Schema.Class<Capabilities>("@sightline/core/Change/Capabilities")({
  can_approve: Schema.Boolean,
  can_deny: Schema.Boolean,
  can_restore: Schema.Boolean,
  caller_approved: Schema.Boolean
}) {}

const changeFields = {
  id: ChangeId,
  number: ChangeNumber,
  author_id: MemberId,
  author_email: Schema.String,
  title: Title,
  description: Schema.String,
  status: ChangeStatus,
  /** The commit of the current revision; approve, deny and restore must name it. */
  git_ref: Schema.String,
  revision: Schema.Int.pipe(Schema.positive()),
  ai_generated: Schema.Boolean,
  chat_id: Schema.optional(ChatId),
  approval_count: Schema.NonNegativeInt,
  required_approvals: Schema.NonNegativeInt,
  /**
   * The checks of the current revision (a semantic model that reads and runs), from its filing or,
   * once approvals were met, its merge. A failed one keeps the change from merging.
   */
  checks: Schema.optionalWith(Schema.Array(ChangeCheck.Check), { default: () => [] }),
  /**
   * The evaluation check of the current revision, when it touches `semantic/` or `evals/`: it runs
   * after the filing (its status moves on its own), and blocks the merge only where an OWNERS rule
   * says `checks=evaluations` (`required`).
   */
  evaluation: Schema.optional(ChangeEvaluation.Evaluation),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}

/**
 * A change as served (`GET /v2/changes`, `GET /v2/changes/{id}`).
 *
 * @since 0.1.0
 * @category models
 */
export class Change extends Schema.Class<Change>("@sightline/core/Change")({
  ...changeFields,
  diffs: Schema.optional(Schema.Array(Diff)),
  capabilities: Schema.optional(Capabilities)
}) {}

/**
 * A change as stored: the resource plus the fields the repository filters and merges on.
 *
 * @since 0.1.0
 * @category models
 */
export class ChangeRecord extends Schema.Class<ChangeRecord>("@sightline/core/Change/ChangeRecord")({
  ...changeFields,
  organization_id: OrganizationId,
  /** The main commit the current revision was made against (absent for an empty library). */
  base_ref: Schema.optional(Schema.String),
  /** Every path the current revision touches (old and new paths of renames), for read scoping. */
  touched_paths: Schema.Array(Schema.String),
  /** Merged at creation by an auto-approve rule (hidden from listings unless asked for). */
  auto_approved: Schema.Boolean
}) {}

/**
 * One revision (changeset) of a change: each resubmission under the same number adds one.
 *
 * @since 0.1.0
 * @category models
 */
export class Revision extends Schema.Class<Revision>("@sightline/core/Change/Revision")({
  organization_id: OrganizationId,
  change_id: ChangeId,
  revision: Schema.Int.pipe(Schema.positive()),
  git_ref: Schema.String,
  base_ref: Schema.optional(Schema.String),
  touched_paths: Schema.Array(Schema.String),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * One approval: a member approved one revision. Unique per change, revision and approver.
 *
 * @since 0.1.0
 * @category models
 */
export class ApprovalRecord extends Schema.Class<ApprovalRecord>("@sightline/core/Change/ApprovalRecord")({
  organization_id: OrganizationId,
  change_id: ChangeId,
  revision: Schema.Int.pipe(Schema.positive()),
  approver_id: MemberId,
  created_at: Schema.DateTimeUtc
}) {}

/**
 * The answer of Create Library Change (seed). `conflicts` is present only when `has_conflicts`.
 *
 * @since 0.1.0
 * @category models
 */
export class LibraryChangeResult
  extends Schema.Class<LibraryChangeResult>("@sightline/core/Change/LibraryChangeResult")({
    change_id: ChangeId,
    change_number: ChangeNumber,
    status: LibraryChangeStatus,
    git_ref: Schema.String,
    has_conflicts: Schema.Boolean,
    conflicts: Schema.optional(Schema.String),
    auto_approved: Schema.Boolean,
    diffs: Schema.Array(Diff),
    raw_diff: Schema.String,
    /** The checks of the revision as filed. */
    checks: Schema.Array(ChangeCheck.Check)
  })
{}

/**
 * The answer of Approve Change (seed).
 *
 * @since 0.1.0
 * @category models
 */
export class ApproveResult extends Schema.Class<ApproveResult>("@sightline/core/Change/ApproveResult")({
  merged: Schema.Boolean,
  approval_count: Schema.NonNegativeInt,
  required_approvals: Schema.NonNegativeInt,
  already_approved: Schema.Boolean,
  /** Why a change whose approvals are met did not merge: a failed check, or a required one not passed yet. */
  blocked_by: Schema.optional(Schema.String)
}) {}

/**
 * The answer of Deny Change and Restore Change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ActionResult = Schema.Struct({ success: Schema.Boolean })
export type ActionResult = typeof ActionResult.Type

/**
 * The answer of Diff Library (`GET /v2/sandcastles/{id}/library/diff`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LibraryDiff = Schema.Struct({
  has_changes: Schema.Boolean,
  diffs: Schema.Array(Diff),
  raw_diff: Schema.String
})
export type LibraryDiff = typeof LibraryDiff.Type

/**
 * The body of Create Library Change. `title` and `description` are required for a new change (no
 * `change_number`); a revision may omit them to keep the current ones.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateLibraryChange = Schema.Struct({
  title: Schema.optional(Title),
  description: Schema.optional(Schema.String),
  draft: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  change_number: Schema.optional(ChangeNumber)
}).annotations({
  // The filter's rule, as the OpenAPI document states it. On the struct, not the filter: `draft`'s
  // default makes the struct a transformation, and a filter on one leaves the encoded side's schema
  // as it is. Inside `allOf`, since an `anyOf` of its own would replace the object's schema.
  jsonSchema: {
    allOf: [{
      anyOf: [
        { required: ["change_number"] },
        {
          required: ["title", "description"],
          properties: { title: { pattern: "\\S" }, description: { pattern: "\\S" } }
        }
      ]
    }]
  }
}).pipe(
  Schema.filter((body) =>
    body.change_number !== undefined || (body.title !== undefined && body.title.trim() !== "" &&
      body.description !== undefined && body.description.trim() !== "") ||
    "title and description are required for a new change (one without change_number)"
  )
)
export type CreateLibraryChange = typeof CreateLibraryChange.Type

/**
 * The body of Approve, Deny and Restore Change: the git ref the caller reviewed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExpectedGitRef = Schema.Struct({ expected_git_ref: Schema.NonEmptyTrimmedString })
export type ExpectedGitRef = typeof ExpectedGitRef.Type

/**
 * The body of Approve Change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApproveChange = ExpectedGitRef
/**
 * The body of Deny Change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DenyChange = ExpectedGitRef
/**
 * The body of Restore Change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RestoreChange = ExpectedGitRef

/** A repeatable query parameter: one value or several, always an array once decoded. */
const repeated = <A, I>(item: Schema.Schema<A, I>) =>
  Schema.transform(Schema.Union(item, Schema.Array(item)), Schema.Array(Schema.typeSchema(item)), {
    strict: true,
    decode: (value) => (Array.isArray(value) ? value : [value]) as ReadonlyArray<A>,
    encode: (values) => values
  })

/**
 * The query of List Changes. `include_auto_approved` defaults to false.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListChangesQuery = Schema.Struct({
  status: Schema.optionalWith(repeated(ChangeStatus), { default: () => [] }),
  page_size: Pagination.limitParam(1, 100, 50),
  page_token: Schema.optional(Schema.String),
  include_auto_approved: Schema.optionalWith(Schema.BooleanFromString, { default: () => false })
})
export type ListChangesQuery = typeof ListChangesQuery.Type

/**
 * How many readable changes exist per status (ignoring the `status` filter and paging).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusCounts = Schema.Struct({
  reserved: Schema.NonNegativeInt,
  draft: Schema.NonNegativeInt,
  open: Schema.NonNegativeInt,
  approved: Schema.NonNegativeInt,
  denied: Schema.NonNegativeInt
})
export type StatusCounts = typeof StatusCounts.Type

/**
 * The answer of List Changes.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListChangesResponse = Schema.Struct({
  changes: Schema.Array(Change),
  next_page_token: Schema.optional(Schema.String),
  counts: StatusCounts
})
export type ListChangesResponse = typeof ListChangesResponse.Type

/**
 * The query of Get Change: a past revision to show (its diffs); the current one when absent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetChangeQuery = Schema.Struct({
  revision: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()))
})
export type GetChangeQuery = typeof GetChangeQuery.Type

// ---------------------------------------------------------------------------------------------
// Lifecycle
// ---------------------------------------------------------------------------------------------

/**
 * What a new revision found when it was filed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Filing {
  /** Filed with `draft: true`. */
  readonly draft: boolean
  /** The merge against main found conflicts. */
  readonly hasConflicts: boolean
  /** An auto-approve rule matches every touched path, no check failed, and it merged. */
  readonly autoApproved: boolean
}

/**
 * The status a revision starts in. Conflicts win over everything (nothing can merge), then an
 * auto-approve rule (already live), then the draft flag.
 *
 * @since 0.1.0
 * @category utils
 */
export const initialStatus = (filing: Filing): LibraryChangeStatus =>
  filing.hasConflicts ? "reserved" : filing.autoApproved ? "approved" : filing.draft ? "draft" : "open"

/**
 * The fields of a brand new change.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeParams extends Filing {
  /** The revision's evaluation check, when it has one. */
  readonly evaluation?: ChangeEvaluation.Evaluation | undefined
  /** The revision's checks (none where no checker applies). */
  readonly checks?: ReadonlyArray<ChangeCheck.Check> | undefined
  readonly id: ChangeId
  readonly organizationId: OrganizationId
  readonly number: number
  readonly authorId: MemberId
  readonly authorEmail: string
  readonly title: string
  readonly description: string
  readonly gitRef: string
  readonly baseRef?: string | undefined
  readonly touchedPaths: ReadonlyArray<string>
  readonly aiGenerated: boolean
  readonly chatId?: ChatId | undefined
  readonly requiredApprovals: number
  readonly now: DateTime.Utc
}

/**
 * A new change at revision 1, in the status its filing calls for.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (params: MakeParams): ChangeRecord =>
  new ChangeRecord({
    id: params.id,
    organization_id: params.organizationId,
    number: params.number,
    author_id: params.authorId,
    author_email: params.authorEmail,
    title: params.title,
    description: params.description,
    status: initialStatus(params),
    git_ref: params.gitRef,
    ...(params.baseRef === undefined ? {} : { base_ref: params.baseRef }),
    touched_paths: params.touchedPaths,
    revision: 1,
    ai_generated: params.aiGenerated,
    ...(params.chatId === undefined ? {} : { chat_id: params.chatId }),
    approval_count: 0,
    required_approvals: params.requiredApprovals,
    auto_approved: params.autoApproved,
    checks: params.checks ?? [],
    ...(params.evaluation === undefined ? {} : { evaluation: params.evaluation }),
    created_at: params.now,
    updated_at: params.now
  })

const conflict = (message: string) => Either.left(new Conflict({ message }))

/**
 * Fails with a `Conflict` unless the caller reviewed the change's current git ref.
 *
 * @since 0.1.0
 * @category utils
 */
export const checkGitRef = (change: ChangeRecord, expectedGitRef: string): Either.Either<ChangeRecord, Conflict> =>
  change.git_ref === expectedGitRef
    ? Either.right(change)
    : conflict(`stale expected_git_ref: change ${change.number} is now at ${change.git_ref}`)

/**
 * The fields a new revision replaces.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReviseParams extends Filing {
  /** The revision's evaluation check, when it has one. */
  readonly evaluation?: ChangeEvaluation.Evaluation | undefined
  /** The new revision's checks (none where no checker applies). */
  readonly checks?: ReadonlyArray<ChangeCheck.Check> | undefined
  readonly gitRef: string
  readonly baseRef?: string | undefined
  readonly touchedPaths: ReadonlyArray<string>
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly requiredApprovals: number
  readonly now: DateTime.Utc
}

/**
 * Files a new revision under the same number. Approvals of older revisions stop counting, so the
 * count restarts at zero; `draft: false` on a draft opens it (the only way out of draft). A denied
 * change must be restored first, and an approved one is merged and final.
 *
 * @since 0.1.0
 * @category utils
 */
export const revise = (change: ChangeRecord, params: ReviseParams): Either.Either<ChangeRecord, Conflict> => {
  if (change.status === "approved") {
    return conflict(`change ${change.number} is already merged; file a new change instead`)
  }
  if (change.status === "denied") {
    return conflict(`change ${change.number} is denied; restore it before filing a new revision`)
  }
  // The older revision's evaluation is stale: only the new one's, if any, is kept.
  const { base_ref: _, evaluation: __, ...rest } = change
  return Either.right(
    new ChangeRecord({
      ...rest,
      ...(params.evaluation === undefined ? {} : { evaluation: params.evaluation }),
      ...(params.baseRef === undefined ? {} : { base_ref: params.baseRef }),
      title: params.title ?? change.title,
      description: params.description ?? change.description,
      status: initialStatus(params),
      git_ref: params.gitRef,
      touched_paths: params.touchedPaths,
      revision: change.revision + 1,
      approval_count: 0,
      required_approvals: params.requiredApprovals,
      auto_approved: params.autoApproved,
      checks: params.checks ?? [],
      updated_at: params.now
    })
  )
}

const reviewable = (change: ChangeRecord, action: string): Either.Either<ChangeRecord, Conflict> =>
  change.status === "open" || change.status === "draft"
    ? Either.right(change)
    : conflict(`cannot ${action} change ${change.number}: it is ${change.status} (only open or draft changes can be)`)

/**
 * Checks that the caller may approve now: the change is open or draft and at `expectedGitRef`.
 *
 * @since 0.1.0
 * @category utils
 */
export const startApproval = (change: ChangeRecord, expectedGitRef: string): Either.Either<ChangeRecord, Conflict> =>
  Either.flatMap(reviewable(change, "approve"), (c) => checkGitRef(c, expectedGitRef))

/**
 * The approval evaluation after recording an approval (see `Approval.evaluate`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalOutcome {
  readonly approvalCount: number
  readonly requiredApprovals: number
  readonly merged: boolean
  readonly now: DateTime.Utc
}

/**
 * Records the new running counts, and moves the change to `approved` when it merged.
 *
 * @since 0.1.0
 * @category utils
 */
export const recordApproval = (change: ChangeRecord, outcome: ApprovalOutcome): ChangeRecord =>
  new ChangeRecord({
    ...change,
    status: outcome.merged ? "approved" : change.status,
    approval_count: outcome.approvalCount,
    required_approvals: outcome.requiredApprovals,
    updated_at: outcome.now
  })

/**
 * The evaluation check of the current revision, as it moved (its own `updated_at` says when).
 *
 * @since 0.1.0
 * @category utils
 */
export const recordEvaluation = (change: ChangeRecord, evaluation: ChangeEvaluation.Evaluation): ChangeRecord =>
  new ChangeRecord({ ...change, evaluation })

/**
 * The checks run again at merge, recorded whatever they found (a failed one kept it from merging).
 *
 * @since 0.1.0
 * @category utils
 */
export const recordChecks = (
  change: ChangeRecord,
  checks: ReadonlyArray<ChangeCheck.Check>,
  now: DateTime.Utc
): ChangeRecord => new ChangeRecord({ ...change, checks, updated_at: now })

/**
 * Parks a change whose approvals were met but whose merge into main now conflicts (main moved
 * since it was filed): like a filing with conflicts, nothing merges until its author files a new
 * revision with the same number. Its counts are kept so that reviewers see where it stood.
 *
 * @since 0.1.0
 * @category utils
 */
export const reserve = (change: ChangeRecord, now: DateTime.Utc): ChangeRecord =>
  new ChangeRecord({ ...change, status: "reserved", updated_at: now })

/**
 * Denies an open or draft change. The git ref is kept so that Restore Change can reopen it as it was.
 *
 * @since 0.1.0
 * @category utils
 */
export const deny = (
  change: ChangeRecord,
  expectedGitRef: string,
  now: DateTime.Utc
): Either.Either<ChangeRecord, Conflict> =>
  Either.map(
    Either.flatMap(reviewable(change, "deny"), (c) => checkGitRef(c, expectedGitRef)),
    (c) => new ChangeRecord({ ...c, status: "denied", updated_at: now })
  )

/**
 * Reopens a denied change (`denied → open`) at the same revision and git ref.
 *
 * @since 0.1.0
 * @category utils
 */
export const restore = (
  change: ChangeRecord,
  expectedGitRef: string,
  now: DateTime.Utc
): Either.Either<ChangeRecord, Conflict> =>
  change.status !== "denied"
    ? conflict(`cannot restore change ${change.number}: it is ${change.status} (only denied changes can be restored)`)
    : Either.map(
      checkGitRef(change, expectedGitRef),
      (c) => new ChangeRecord({ ...c, status: "open", updated_at: now })
    )

/**
 * The served change of a record, with diffs and capabilities when the caller asked for one change.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChange = (
  record: ChangeRecord,
  extra: { readonly diffs?: ReadonlyArray<Diff>; readonly capabilities?: Capabilities } = {}
): Change => {
  const {
    auto_approved: _a,
    base_ref: _b,
    organization_id: _o,
    touched_paths: _t,
    ...fields
  } = record
  return new Change({ ...fields, ...extra }, true)
}

/**
 * Zero changes of every status.
 *
 * @since 0.1.0
 * @category constants
 */
export const emptyCounts: StatusCounts = { reserved: 0, draft: 0, open: 0, approved: 0, denied: 0 }

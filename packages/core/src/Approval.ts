/**
 * Approval evaluation of library changes: who may approve, deny or restore a change, how many
 * approvals it needs, how many count, and whether it merges or auto-approves.
 *
 * Part of the policy engine: pure functions over the OWNERS tree of the TARGET (main) snapshot and
 * plain data about the people involved.
 *
 * How a touched path is governed (see `docs/owners.md`):
 * - The rules in effect for the path's governing folder (`Owners.governingFolder`) that apply to
 *   the author (no `authors=` scope, or the author holds one of its roles) govern it: the path
 *   needs the largest `approvals` among them, from distinct approvers when any of them says so.
 * - When no rule applies (none declared, or all scoped to roles the author lacks), the change
 *   applies "on the author's own authority": one approval by someone with write authority, and
 *   the author's own approval counts. An author who is an owner can thus land it alone; anybody
 *   else needs an owner.
 * - A change needs the largest requirement over its touched paths, and only approvers holding write
 *   authority on EVERY touched path count.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Decision from "./Decision.js"
import * as Owners from "./Owners.js"

/**
 * The approval requirement of a path or a change.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requirement {
  readonly approvals: number
  /** The author's own approval does not count (and the author may not approve). */
  readonly distinct: boolean
}

/**
 * The requirement when no rule applies: the author's own authority (one approval, self counts).
 *
 * @since 0.1.0
 * @category constants
 */
export const ownAuthority: Requirement = { approvals: 1, distinct: false }

const combine = (requirements: ReadonlyArray<Requirement>): Requirement =>
  requirements.length === 0
    ? ownAuthority
    : {
      approvals: Math.max(...requirements.map((r) => r.approvals)),
      distinct: requirements.some((r) => r.distinct)
    }

/**
 * The rules governing one path for this author (empty: the author's own authority).
 *
 * @since 0.1.0
 * @category utils
 */
export const governingRules = (
  tree: Owners.OwnersTree,
  author: Owners.Caller,
  path: string
): ReadonlyArray<Owners.Rule> => {
  // The root OWNERS file has no folder above it: the root's own rules govern it (and only admins
  // hold write authority on it), so it can never be loosened more easily than anything else.
  const folder = Option.getOrElse(Owners.governingFolder(path), () => "")
  return Owners.effective(tree, folder).rules
    .map((declared) => declared.rule)
    .filter((rule) => rule.authors.length === 0 || Owners.hasAnyRole(author, rule.authors))
}

/**
 * The requirement of one path for this author.
 *
 * @since 0.1.0
 * @category utils
 */
export const requirementOf = (tree: Owners.OwnersTree, author: Owners.Caller, path: string): Requirement =>
  combine(governingRules(tree, author, path).map((rule) => ({ approvals: rule.approvals, distinct: rule.distinct })))

/**
 * The requirement of a change: the strictest over its touched paths.
 *
 * @since 0.1.0
 * @category utils
 */
export const requirement = (
  tree: Owners.OwnersTree,
  author: Owners.Caller,
  touchedPaths: ReadonlyArray<string>
): Requirement => combine(touchedPaths.map((path) => requirementOf(tree, author, path)))

/**
 * Write authority on every path (the first path without it denies).
 *
 * @since 0.1.0
 * @category utils
 */
export const writeAuthorityOnAll = (
  tree: Owners.OwnersTree,
  caller: Owners.Caller,
  touchedPaths: ReadonlyArray<string>
): Decision.Decision<"permission_denied"> =>
  Decision.all(touchedPaths.map((path) => Owners.writeAuthority(tree, caller, path)))

/**
 * An approval given so far: by whom, on which revision.
 *
 * @since 0.1.0
 * @category models
 */
export interface GivenApproval {
  readonly revision: number
  readonly approver: Owners.Caller
}

/**
 * What the evaluation needs to know about a change.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChangeFacts {
  /** The OWNERS tree of the target (main) snapshot. */
  readonly tree: Owners.OwnersTree
  /** Every path the change touches (old and new paths of renames). */
  readonly touchedPaths: ReadonlyArray<string>
  readonly author: Owners.Caller
  /** The current revision: approvals of older revisions do not count. */
  readonly revision: number
  readonly approvals: ReadonlyArray<GivenApproval>
}

/**
 * The approvers that count: on the current revision, once each, holding write authority on every
 * touched path, and not the author when distinct approvers are required.
 *
 * @since 0.1.0
 * @category utils
 */
export const countedApprovers = (facts: ChangeFacts): Array<string> => {
  const { distinct } = requirement(facts.tree, facts.author, facts.touchedPaths)
  const eligible = facts.approvals.filter((a) =>
    a.revision === facts.revision &&
    !(distinct && a.approver.memberId === facts.author.memberId) &&
    Decision.isAllow(writeAuthorityOnAll(facts.tree, a.approver, facts.touchedPaths))
  )
  return Arr.dedupe(eligible.map((a) => a.approver.memberId))
}

/**
 * The checks that must have passed before the change merges (`rule: checks=...`): those of every
 * rule governing any of its paths for this author.
 *
 * @since 0.1.0
 * @category utils
 */
export const requiredChecks = (
  tree: Owners.OwnersTree,
  author: Owners.Caller,
  touchedPaths: ReadonlyArray<string>
): ReadonlyArray<Owners.RequiredCheck> => [
  ...new Set(touchedPaths.flatMap((path) => governingRules(tree, author, path).flatMap((rule) => rule.checks)))
]

/**
 * May the caller approve? Write authority on every touched path is required, and a rule asking
 * for distinct approvers rejects the author's self-approval.
 *
 * @since 0.1.0
 * @category utils
 */
export const canApprove = (facts: ChangeFacts, caller: Owners.Caller): Decision.Decision<"permission_denied"> =>
  Decision.all([
    writeAuthorityOnAll(facts.tree, caller, facts.touchedPaths),
    requirement(facts.tree, facts.author, facts.touchedPaths).distinct && caller.memberId === facts.author.memberId
      ? Decision.deny("permission_denied", "self-approval is not allowed: a folder rule requires distinct approvers")
      : Decision.allow
  ])

/**
 * May the caller deny? The author always may; anyone else needs write authority on every path.
 *
 * @since 0.1.0
 * @category utils
 */
export const canDeny = (facts: ChangeFacts, caller: Owners.Caller): Decision.Decision<"permission_denied"> =>
  caller.memberId === facts.author.memberId
    ? Decision.allow
    : writeAuthorityOnAll(facts.tree, caller, facts.touchedPaths)

/**
 * May the caller restore a denied change? The same people who may deny it: the author (who may
 * withdraw a denial of their own) and anyone with write authority on every path.
 *
 * @since 0.1.0
 * @category constants
 */
export const canRestore = canDeny

/**
 * Does an auto-approve rule match every touched path for this author? A change touching an
 * OWNERS file is never auto-approved: access changes always go through review.
 *
 * @since 0.1.0
 * @category utils
 */
export const autoApproves = (
  tree: Owners.OwnersTree,
  author: Owners.Caller,
  touchedPaths: ReadonlyArray<string>
): boolean =>
  touchedPaths.length > 0 &&
  touchedPaths.every((path) =>
    !Owners.isOwnersFile(path) &&
    Owners.effective(tree, Owners.folderOf(path)).autoApprove.some(({ folder, rule }) =>
      (rule.authors.length === 0 || Owners.hasAnyRole(author, rule.authors)) &&
      rule.paths.some((glob) => Owners.globMatches(glob, Owners.relativeTo(folder, path)))
    )
  )

/**
 * The full evaluation of a change for one caller.
 *
 * @since 0.1.0
 * @category models
 */
export interface Evaluation {
  readonly requiredApprovals: number
  readonly distinct: boolean
  /** Counted approvals (see `countedApprovers`). */
  readonly approvalCount: number
  /** The change merges: counted approvals reached the requirement. */
  readonly mergeable: boolean
  readonly autoApprove: boolean
  readonly canApprove: Decision.Decision<"permission_denied">
  readonly canDeny: Decision.Decision<"permission_denied">
  readonly canRestore: Decision.Decision<"permission_denied">
  /** The caller approved the current revision (whether or not that approval counts). */
  readonly callerApproved: boolean
}

/**
 * Evaluates a change for a caller.
 *
 * @since 0.1.0
 * @category utils
 */
export const evaluate = (facts: ChangeFacts, caller: Owners.Caller): Evaluation => {
  const { approvals, distinct } = requirement(facts.tree, facts.author, facts.touchedPaths)
  const approvalCount = countedApprovers(facts).length
  return {
    requiredApprovals: approvals,
    distinct,
    approvalCount,
    mergeable: approvalCount >= approvals,
    autoApprove: autoApproves(facts.tree, facts.author, facts.touchedPaths),
    canApprove: canApprove(facts, caller),
    canDeny: canDeny(facts, caller),
    canRestore: canRestore(facts, caller),
    callerApproved: facts.approvals.some((a) =>
      a.revision === facts.revision && a.approver.memberId === caller.memberId
    )
  }
}

/**
 * Re-validation at merge, against the OWNERS tree of the snapshot being merged into (which may
 * have moved since the change was approved). A change that was auto-approved must still match an
 * auto-approve rule; any other must still hold enough counted approvals. A denial is a `conflict`:
 * the change stays as it is and needs more review.
 *
 * @since 0.1.0
 * @category utils
 */
export const revalidate = (facts: ChangeFacts & { readonly autoApproved: boolean }): Decision.Decision<"conflict"> => {
  if (facts.autoApproved) {
    return autoApproves(facts.tree, facts.author, facts.touchedPaths)
      ? Decision.allow
      : Decision.deny("conflict", "the target's OWNERS rules no longer auto-approve every path of this change")
  }
  const { approvals } = requirement(facts.tree, facts.author, facts.touchedPaths)
  const counted = countedApprovers(facts).length
  return counted >= approvals
    ? Decision.allow
    : Decision.deny(
      "conflict",
      `the target's OWNERS rules need ${approvals} approval(s) from approvers with write authority on every path; ${counted} count`
    )
}

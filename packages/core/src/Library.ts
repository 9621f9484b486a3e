/**
 * The Context Library as a caller sees it: main with its OWNERS policy, snapshots pruned to what the
 * caller may read (the sandbox mount), and staged edits checked and diffed against their base.
 *
 * Every read here goes through the OWNERS tree of **main** (the library as it is now), never the
 * tree of the snapshot being read: a change's own OWNERS edits must not decide who sees it, or a
 * proposal adding its author as a reader of a parent folder would reveal the hidden folders below.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auth } from "./Auth.js"
import type * as Change from "./Change.js"
import * as Decision from "./Decision.js"
import { InvalidRequest, NotFound, type Unauthenticated } from "./Errors.js"
import type { MemberId, OrganizationId } from "./Ids.js"
import * as LibraryDiff from "./LibraryDiff.js"
import { applyChanges, LibraryStore, validatePaths } from "./LibraryStore.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Owners from "./Owners.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * The files of a snapshot: path to bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Files = LibraryDiff.Files

/**
 * Staged edits, as a sandbox reports them against the snapshot it mounted: a path to its new bytes,
 * or none to delete it. Edits rather than a whole snapshot, because a mount is pruned: a file
 * missing from a pruned snapshot may be hidden, not deleted.
 *
 * @since 0.1.0
 * @category models
 */
export type Edits = HashMap.HashMap<string, Option.Option<Uint8Array>>

/**
 * Main as it is now, with the OWNERS tree that governs every read and review.
 *
 * @since 0.1.0
 * @category models
 */
export interface Main {
  /** The ref of main; none for a library nothing was merged into yet. */
  readonly head: Option.Option<string>
  readonly files: Files
  readonly tree: Owners.OwnersTree
}

/**
 * A snapshot pruned to what one caller may read (what a sandbox mounts).
 *
 * @since 0.1.0
 * @category models
 */
export interface View {
  /** The commit shown; none for the empty library. */
  readonly ref: Option.Option<string>
  readonly files: Files
}

/**
 * Edits applied to their base and checked: the snapshot they make and its diff.
 *
 * @since 0.1.0
 * @category models
 */
export interface Staged {
  readonly baseRef: Option.Option<string>
  /** The full snapshot the edits make (hidden files of the base included, untouched). */
  readonly files: Files
  readonly diff: LibraryDiff.DiffResult
  /** Every path the diff touches (both paths of a rename), sorted. */
  readonly touchedPaths: ReadonlyArray<string>
}

/**
 * Reads the library for callers.
 *
 * @since 0.1.0
 * @category services
 */
export class Library extends Context.Tag("@sightline/core/Library")<Library, Library.Service>() {}

export declare namespace Library {
  /** Library reads for a caller, and the policy inputs the change use cases share. */
  export interface Service {
    /** Main and its OWNERS tree (a malformed OWNERS file on main locks the library to admins). */
    readonly main: (organizationId: OrganizationId) => Effect.Effect<Main>
    /** The commit main points at (none for an empty library), without reading its files. */
    readonly head: (organizationId: OrganizationId) => Effect.Effect<Option.Option<string>>
    /**
     * The whole library at a commit of the organization, unpruned: for what governs every caller
     * alike (semantic models) and for trusted jobs. Never hand it to a caller as it is. An unknown
     * or foreign ref is `not_found`.
     */
    readonly at: (organizationId: OrganizationId, ref: string) => Effect.Effect<Files, NotFound>
    /** The caller as the OWNERS rules see it: the roles it acts with on this request, and its e-mail. */
    readonly callerOf: (principal: Policy.Principal) => Effect.Effect<Owners.Caller>
    /**
     * Members as the OWNERS rules see them now, with their live roles (direct and through groups),
     * whatever credential they used earlier. Unknown and soft-deleted members are absent.
     */
    readonly liveCallers: (
      organizationId: OrganizationId,
      memberIds: Iterable<MemberId>
    ) => Effect.Effect<HashMap.HashMap<MemberId, Owners.Caller>>
    /**
     * A snapshot (main when `ref` is absent) pruned to the paths the caller may read, OWNERS files
     * included: they are how OWNERS changes are proposed (serving them over the files endpoint is
     * the sandbox's separate rule). An unknown or foreign ref is `not_found`.
     */
    readonly snapshotFor: (
      principal: Policy.Principal,
      ref?: string
    ) => Effect.Effect<View, NotFound | Unauthenticated>
    /**
     * Applies staged edits to their base (`baseRef` none: the empty library). Invalid paths and an
     * unknown base are `invalid_request`; an edit to a path the caller may not read is `not_found`.
     */
    readonly stage: (
      principal: Policy.Principal,
      baseRef: Option.Option<string>,
      edits: Edits
    ) => Effect.Effect<Staged, InvalidRequest | NotFound | Unauthenticated>
    /** Diff Library (`GET /v2/sandcastles/{id}/library/diff`): what `stage` finds, as served. */
    readonly diff: (
      principal: Policy.Principal,
      baseRef: Option.Option<string>,
      edits: Edits
    ) => Effect.Effect<Change.LibraryDiff, InvalidRequest | NotFound | Unauthenticated>
  }
}

/**
 * The tree used when main holds a malformed OWNERS file (only a direct write to the store can put
 * one there: changes introducing one never merge). It fails closed: one root file whose only
 * reader is a role no one can hold (role names are never empty), no owners, no inheritance, so
 * only admins read and write until an admin's change repairs the file.
 *
 * @since 0.1.0
 * @category constants
 */
export const lockedTree: Owners.OwnersTree = {
  folders: HashMap.make([
    "",
    new Owners.OwnersFile({
      owners: [],
      readers: [{ _tag: "Role", name: "" }],
      inherit: false,
      rules: [],
      autoApprove: []
    })
  ])
}

/**
 * The OWNERS tree of a snapshot, or the locked tree when one of its OWNERS files is malformed.
 *
 * @since 0.1.0
 * @category utils
 */
export const treeOf = (files: Files): Owners.OwnersTree =>
  Either.getOrElse(Owners.fromSnapshot(files), () => lockedTree)

/**
 * May the caller read every one of these paths (under main's tree)?
 *
 * @since 0.1.0
 * @category utils
 */
export const readsAll = (
  tree: Owners.OwnersTree,
  caller: Owners.Caller,
  paths: Iterable<string>
): Decision.Decision<"not_found"> =>
  Decision.all(Arr.map(Arr.fromIterable(paths), (path) => Owners.readAuthority(tree, caller, path)))

/**
 * Builds the service from the library store, the member repository and `Auth` (live roles).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const store = yield* LibraryStore
  const members = yield* MemberRepo
  const auth = yield* Auth

  const filesAt = (organizationId: OrganizationId, ref: Option.Option<string>) =>
    Option.match(ref, {
      onNone: () => Effect.succeed(Option.some<Files>(HashMap.empty())),
      onSome: (r) => Effect.map(store.read(organizationId, r), Option.map((snapshot) => snapshot.files))
    })

  const main = Traced.fn("Library.main")(function*(organizationId: OrganizationId) {
    const head = yield* store.head(organizationId)
    // A head always names a stored commit of its organization; anything else is a broken store.
    const files = yield* Effect.flatMap(
      filesAt(organizationId, head),
      Option.match({
        onNone: () => Effect.dieMessage(`main of organization ${organizationId} names a missing commit`),
        onSome: Effect.succeed
      })
    )
    return { head, files, tree: treeOf(files) }
  })

  const at = Traced.fn("Library.at")(function*(organizationId: OrganizationId, ref: string) {
    const files = yield* filesAt(organizationId, Option.some(ref))
    if (Option.isNone(files)) return yield* new NotFound()
    return files.value
  })

  const callerFrom = (principal: Policy.Principal, email: Option.Option<string>): Owners.Caller => {
    const roles = Policy.effectiveRoles(principal)
    return {
      memberId: principal.memberId,
      ...Option.match(email, { onNone: () => ({}), onSome: (e) => ({ email: e }) }),
      roleIds: roles.map((role) => role.id),
      roleNames: roles.map((role) => role.name),
      isAdmin: Policy.isAdmin(principal)
    }
  }

  const callerOf = Traced.fn("Library.callerOf")(function*(principal: Policy.Principal) {
    const member = yield* members.get(principal.organizationId, principal.memberId)
    return callerFrom(principal, Option.map(member, (m) => m.email))
  })

  const liveCallers = Traced.fn("Library.liveCallers")(
    function*(organizationId: OrganizationId, memberIds: Iterable<MemberId>) {
      // A session principal carries exactly the member's live roles, so the OWNERS view of it is the
      // member's own, not that of the key it happened to approve with. A deleted member is checked
      // here too, not only by `Auth`: a departed reviewer must never count.
      const found = yield* Effect.forEach(
        Arr.dedupe(memberIds),
        (memberId) =>
          auth.sessionPrincipal(organizationId, memberId).pipe(
            Effect.option,
            Effect.map(Option.filter((principal) => Decision.isAllow(Policy.authenticated(principal)))),
            Effect.flatMap(Option.match({
              onNone: () => Effect.succeed(Option.none()),
              onSome: (principal) =>
                Effect.map(callerOf(principal), (caller) => Option.some([memberId, caller] as const))
            }))
          )
      )
      return HashMap.fromIterable(Arr.getSomes(found))
    }
  )

  const snapshotFor = Traced.fn("Library.snapshotFor")(function*(principal: Policy.Principal, ref?: string) {
    yield* Decision.enforce(Policy.authenticated(principal))
    const current = yield* main(principal.organizationId)
    const caller = yield* callerOf(principal)
    if (ref === undefined) {
      return { ref: current.head, files: Owners.pruneFiles(current.tree, caller, current.files) }
    }
    const files = yield* at(principal.organizationId, ref)
    return { ref: Option.some(ref), files: Owners.pruneFiles(current.tree, caller, files) }
  })

  const stage = Traced.fn("Library.stage")(
    function*(principal: Policy.Principal, baseRef: Option.Option<string>, edits: Edits) {
      yield* Decision.enforce(Policy.authenticated(principal))
      yield* validatePaths(HashMap.keys(edits))
      const base = yield* filesAt(principal.organizationId, baseRef)
      if (Option.isNone(base)) {
        return yield* new InvalidRequest({ message: `unknown library base ${Option.getOrElse(baseRef, () => "")}` })
      }
      const current = yield* main(principal.organizationId)
      const caller = yield* callerOf(principal)
      // Every edited path, not only the ones that end up in the diff: otherwise writing a guessed
      // content to a hidden path would tell, by an empty diff, that the guess was right.
      yield* Decision.enforce(readsAll(current.tree, caller, HashMap.keys(edits)))
      const files = applyChanges(base.value, edits)
      const diff = LibraryDiff.diffFiles(base.value, files)
      return { baseRef, files, diff, touchedPaths: LibraryDiff.touchedPaths(diff.diffs) }
    }
  )

  const diff = Traced.fn("Library.diff")(
    function*(principal: Policy.Principal, baseRef: Option.Option<string>, edits: Edits) {
      const staged = yield* stage(principal, baseRef, edits)
      return { has_changes: staged.diff.diffs.length > 0, diffs: staged.diff.diffs, raw_diff: staged.diff.raw_diff }
    }
  )

  const head = (organizationId: OrganizationId) => store.head(organizationId)

  return Library.of({ main, head, at, callerOf, liveCallers, snapshotFor, stage, diff })
})

/**
 * The `Library` service over the library store, the member repository and `Auth`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Library, never, LibraryStore | MemberRepo | Auth> = Layer.effect(Library, make)

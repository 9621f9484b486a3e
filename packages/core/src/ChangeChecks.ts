/**
 * Checks on a library change: what the change's files must pass before it may merge (a semantic
 * model that reads and runs against its connector). Each kind of check is a `Checker`;
 * `ChangeChecks` runs them all on a change's snapshot when it is filed and again on the merged files
 * at merge. What a check finds is a `ChangeCheck.Check`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ChangeCheck from "./ChangeCheck.js"
import type { OrganizationId } from "./Ids.js"
import type * as LibraryDiff from "./LibraryDiff.js"
import type * as Policy from "./Policy.js"

/**
 * A change as the checkers see it: who files or merges it (a check reads only what they may use),
 * its organization, the snapshot it makes, and what it touches.
 *
 * @since 0.1.0
 * @category models
 */
export interface Subject {
  readonly principal: Policy.Principal
  readonly organizationId: OrganizationId
  readonly files: LibraryDiff.Files
  readonly touchedPaths: ReadonlyArray<string>
}

/**
 * One kind of check.
 *
 * @since 0.1.0
 * @category models
 */
export type Checker = (subject: Subject) => Effect.Effect<ReadonlyArray<ChangeCheck.Check>>

/**
 * Runs every kind of check on a change.
 *
 * @since 0.1.0
 * @category services
 */
export class ChangeChecks extends Context.Tag("@sightline/core/ChangeChecks")<ChangeChecks, ChangeChecks.Service>() {}

export declare namespace ChangeChecks {
  /** The checks of a change. */
  export interface Service {
    readonly check: Checker
  }
}

/**
 * The checks of every checker, in order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (checkers: ReadonlyArray<Checker>): ChangeChecks.Service => ({
  check: (subject) => Effect.map(Effect.forEach(checkers, (checker) => checker(subject)), (all) => all.flat())
})

/**
 * No checks: every change may merge on its approvals alone.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNone: Layer.Layer<ChangeChecks> = Layer.succeed(ChangeChecks, make([]))

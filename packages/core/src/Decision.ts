/**
 * Policy decisions are data: `allow`, or `deny` with a reason and the error code it maps to.
 *
 * Use cases turn a deny into the matching tagged error with `Decision.enforce`; tests and host
 * applications can inspect the reason without running any effect.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Errors from "./Errors.js"

/** The error codes a denial can map to. */
export type DenyCode = "invalid_request" | "permission_denied" | "not_found" | "conflict" | "unauthenticated"

/** An allowed action. */
export interface Allow {
  readonly _tag: "Allow"
}

/** A denied action: why (for humans and logs) and which API error it becomes. */
export interface Deny {
  readonly _tag: "Deny"
  readonly code: DenyCode
  readonly reason: string
}

/** The outcome of a policy question. */
export type Decision = Allow | Deny

const { Allow: makeAllow, Deny: makeDeny } = Data.taggedEnum<Decision>()

/** The allow decision. */
export const allow: Decision = makeAllow()

/** A denial with its error code and reason. */
export const deny = (code: DenyCode, reason: string): Deny => makeDeny({ code, reason }) as Deny

/** Is this decision an allow? */
export const isAllow = (decision: Decision): decision is Allow => decision._tag === "Allow"

/** Is this decision a deny? */
export const isDeny = (decision: Decision): decision is Deny => decision._tag === "Deny"

/** The first denial of several checks, or allow when every check allows. */
export const all = (decisions: Iterable<Decision>): Decision => {
  for (const decision of decisions) if (decision._tag === "Deny") return decision
  return allow
}

/**
 * Fails with the tagged error of a denial, or succeeds with void.
 * A `not_found` denial keeps the seed's default message so it never hints that the object exists.
 *
 * A denial only ever fails with the error of its code. Each policy function documents the codes it
 * can deny with, so a use case states them as `E` (`enforce<Unauthenticated | PermissionDenied>(...)`)
 * and its error channel stays as narrow as the rules make it; `E` defaults to every API error.
 */
export const enforce = <E extends Errors.ApiError = Errors.ApiError>(decision: Decision): Effect.Effect<void, E> =>
  decision._tag === "Allow"
    ? Effect.void
    : Effect.fail(Errors.fromCode(decision.code, decision.code === "not_found" ? undefined : decision.reason) as E)

/**
 * Policy decisions are data: `allow`, or `deny` with a reason and the error code it maps to.
 *
 * Use cases turn a deny into the matching tagged error with `Decision.enforce`; tests and host
 * applications can inspect the reason without running any effect.
 *
 * A decision is typed by the codes it can deny with (`Decision<"unauthenticated" | "not_found">`),
 * so `enforce` derives the exact error union from the policy function that produced it and a use
 * case's error channel stays as narrow as its rules, without annotations at the call site.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Errors from "./Errors.js"

/**
 * The error codes a denial can map to.
 *
 * @since 0.1.0
 * @category models
 */
export type DenyCode = "invalid_request" | "permission_denied" | "not_found" | "conflict" | "unauthenticated"

/**
 * An allowed action.
 *
 * @since 0.1.0
 * @category models
 */
export interface Allow {
  readonly _tag: "Allow"
}

/**
 * A denied action: why (for humans and logs) and which API error it becomes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Deny<C extends DenyCode = DenyCode> {
  readonly _tag: "Deny"
  readonly code: C
  readonly reason: string
}

/**
 * The outcome of a policy question that can deny with the codes `C`.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision<C extends DenyCode = DenyCode> = Allow | Deny<C>

/**
 * The tagged error of each deny code.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorByCode {
  readonly invalid_request: Errors.InvalidRequest
  readonly permission_denied: Errors.PermissionDenied
  readonly not_found: Errors.NotFound
  readonly conflict: Errors.Conflict
  readonly unauthenticated: Errors.Unauthenticated
}

/**
 * The tagged error a denial with code `C` fails with.
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorOf<C extends DenyCode> = ErrorByCode[C]

const errorOfCode: { readonly [K in DenyCode]: new(props: { readonly message?: string }) => ErrorByCode[K] } = {
  invalid_request: Errors.InvalidRequest,
  permission_denied: Errors.PermissionDenied,
  not_found: Errors.NotFound,
  conflict: Errors.Conflict,
  unauthenticated: Errors.Unauthenticated
}

/**
 * The allow decision.
 *
 * @since 0.1.0
 * @category constants
 */
export const allow: Allow = Data.tagged<Allow>("Allow")()

/**
 * A denial with its error code and reason.
 *
 * @since 0.1.0
 * @category utils
 */
export const deny = <C extends DenyCode>(code: C, reason: string): Deny<C> =>
  Data.tagged<Deny<C>>("Deny")({ code, reason })

/**
 * Is this decision an allow?
 *
 * @since 0.1.0
 * @category guards
 */
export const isAllow = <C extends DenyCode>(decision: Decision<C>): decision is Allow => decision._tag === "Allow"

/**
 * Is this decision a deny?
 *
 * @since 0.1.0
 * @category guards
 */
export const isDeny = <C extends DenyCode>(decision: Decision<C>): decision is Deny<C> => decision._tag === "Deny"

/**
 * The first denial of several checks, or allow when every check allows.
 *
 * @since 0.1.0
 * @category utils
 */
export const all = <C extends DenyCode>(decisions: Iterable<Decision<C>>): Decision<C> => {
  for (const decision of decisions) if (decision._tag === "Deny") return decision
  return allow
}

/**
 * The tagged error of a denial. A `not_found` denial keeps the seed's default message, so it never hints that the object exists.
 *
 * @since 0.1.0
 * @category utils
 */
export const toError = <C extends DenyCode>(denial: Deny<C>): ErrorOf<C> => {
  const ErrorClass = errorOfCode[denial.code]
  return new ErrorClass(denial.code === "not_found" ? {} : { message: denial.reason })
}

/**
 * Fails with the tagged error of a denial (see `toError`), or succeeds with void.
 *
 * @since 0.1.0
 * @category utils
 */
export const enforce = <C extends DenyCode>(decision: Decision<C>): Effect.Effect<void, ErrorOf<C>> =>
  decision._tag === "Allow" ? Effect.void : Effect.fail(toError(decision))

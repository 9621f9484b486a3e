/**
 * Sign-in for people: password sign-in, sign-in links (invite and reset) that set a password, and
 * browser sessions renewed with rotating refresh tokens.
 *
 * A refresh token is a random secret stored only as its SHA-256 hash. Each renewal replaces it; the
 * replaced one is remembered, so presenting it again after `Session.rotationGrace` is taken for a
 * stolen token and ends the session (within the grace, a second tab's renewal is only refused).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auditor } from "./Auditor.js"
import * as Decision from "./Decision.js"
import { Delivery } from "./Delivery.js"
import { InvalidRequest, NotFound, type PermissionDenied, Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import type { MemberId, OrganizationId } from "./Ids.js"
import * as SignInLinks from "./internal/signInLinks.js"
import type { Member } from "./Member.js"
import { MemberRepo } from "./MemberRepo.js"
import { PasswordHasher } from "./PasswordHasher.js"
import * as Policy from "./Policy.js"
import * as Role from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import * as Secret from "./Secret.js"
import * as Session from "./Session.js"
import { SessionRepo } from "./SessionRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The one message of a failed password sign-in: it never tells which half was wrong.
 *
 * @since 0.1.0
 * @category constants
 */
export const BAD_CREDENTIALS = "invalid e-mail address or password"

/**
 * The message of a refresh token that is missing, unknown, expired or ended.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SESSION_ENDED = Session.sessionEnded

/**
 * The message of a sign-in link that is unknown, used or expired.
 *
 * @since 0.1.0
 * @category constants
 */
export const LINK_UNUSABLE = "this sign-in link is invalid, used or expired: ask for a new one"

/**
 * The sign-in use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Sessions extends Context.Tag("@sightline/core/Sessions")<Sessions, Sessions.Service>() {}

export declare namespace Sessions {
  /** Sign-in, renewal and sign-out; and the links that let a person set a password. */
  export interface Service {
    /**
     * `POST /v2/auth/sign-in`: a new session for the live human member with this e-mail address and
     * password. An address whose password works in several organizations needs `organization_id`.
     */
    readonly signIn: (
      request: Session.PasswordSignIn
    ) => Effect.Effect<Session.SignedIn, Unauthenticated | InvalidRequest>
    /**
     * Sign-in through an identity provider that vouched for this e-mail address (OIDC): a new
     * session for the one live human member with it. Several organizations' members with one
     * address are refused, since the provider cannot say which one is meant.
     */
    readonly signInWithIdentity: (email: string) => Effect.Effect<Session.SignedIn, Unauthenticated>
    /**
     * `POST /v2/auth/password`: uses a sign-in link to set the member's password, ends the member's
     * other sessions, and signs in.
     */
    readonly setPassword: (request: Session.SetPassword) => Effect.Effect<Session.SignedIn, Unauthenticated>
    /** `POST /v2/auth/refresh`: renews a session; the presented refresh token stops working. */
    readonly refresh: (refreshToken: string) => Effect.Effect<Session.SignedIn, Unauthenticated>
    /** `POST /v2/auth/sign-out`: ends the session of this refresh token (an unknown one is a no-op). */
    readonly signOut: (refreshToken: string) => Effect.Effect<void>
    /**
     * `POST /v2/members/{id}/sign-in-link` (`member:write`): a new link for a live human member of
     * the caller's organization whose permissions the caller holds all of; the member's earlier
     * links stop working. With `linkUrl`, where e-mail delivery is configured, the link is e-mailed
     * to the member and not answered (its token is absent).
     */
    readonly issueLink: (
      principal: Policy.Principal,
      memberId: MemberId,
      request: Session.IssueLink,
      linkUrl?: Session.LinkUrl
    ) => Effect.Effect<Session.IssuedLink, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** A link for a member without a caller (the bootstrap admin, the ops CLI). */
    readonly linkFor: (
      organizationId: OrganizationId,
      memberId: MemberId,
      purpose: Session.LinkPurpose
    ) => Effect.Effect<Session.SignInLink>
    /** The deployment's session signing key (made on first use, then the same on every process). */
    readonly signingKey: Effect.Effect<string>
  }
}

/**
 * Builds the service over the repositories, the hashers and the auditor in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* SessionRepo
  const members = yield* MemberRepo
  const roles = yield* RoleRepo
  const passwords = yield* PasswordHasher
  const hasher = yield* Secret.SecretHasher
  const ids = yield* IdGenerator
  const tx = yield* Transaction
  const auditor = yield* Auditor
  // Only what it names: the context is merged into the caller's on every call.
  const context = Context.pick(SessionRepo, Secret.SecretHasher)(
    yield* Effect.context<SessionRepo | Secret.SecretHasher>()
  )
  const delivery = Context.make(Delivery, yield* Delivery)

  // Verifying against this when no member matched keeps a sign-in's timing from telling whether an
  // address has an account.
  const decoy = yield* Effect.cached(passwords.hash("decoy password, never matched"))

  const canSignIn = (member: Member) => member.deleted_at === undefined && !member.is_service_account

  const startSession = (member: Member) =>
    Effect.gen(function*() {
      const token = yield* Effect.provide(SignInLinks.newToken, context)
      const now = yield* DateTime.now
      const expires = DateTime.addDuration(now, Session.refreshTokenLifetime)
      const id = yield* ids.uuid
      yield* repo.createSession({
        id,
        organization_id: member.organization_id,
        member_id: member.id,
        refresh_hash: yield* hasher.hash(token),
        expires_at: expires,
        created_at: now
      })
      return Session.signedIn({ id, organization_id: member.organization_id, member_id: member.id }, token, expires)
    })

  const signIn = Traced.fn("Sessions.signIn")(function*(request: Session.PasswordSignIn) {
    const candidates = Arr.filter(
      yield* members.findEverywhereByEmail(request.email),
      (member) =>
        canSignIn(member) &&
        (request.organization_id === undefined || member.organization_id === request.organization_id)
    )
    const matching: Array<Member> = []
    let verified = 0
    for (const member of candidates) {
      const stored = yield* repo.passwordHash(member.organization_id, member.id)
      if (Option.isNone(stored)) continue
      verified++
      if (yield* passwords.verify(request.password, stored.value)) matching.push(member)
    }
    if (verified === 0) yield* passwords.verify(request.password, yield* decoy)
    if (matching.length === 0) return yield* new Unauthenticated({ message: BAD_CREDENTIALS })
    if (matching.length > 1) {
      return yield* new InvalidRequest({
        message: "this e-mail address and password sign in to several organizations: send organization_id"
      })
    }
    return yield* startSession(matching[0]!)
  })

  const signInWithIdentity = Traced.fn("Sessions.signInWithIdentity")(function*(email: string) {
    const found = Arr.filter(yield* members.findEverywhereByEmail(email), canSignIn)
    if (found.length === 0) {
      return yield* new Unauthenticated({ message: `no member has the e-mail address ${email}: ask for an invite` })
    }
    if (found.length > 1) {
      return yield* new Unauthenticated({
        message: `${email} belongs to members of several organizations: sign in with a password instead`
      })
    }
    return yield* startSession(found[0]!)
  })

  const setPassword = Traced.fn("Sessions.setPassword")(function*(request: Session.SetPassword) {
    const hash = yield* passwords.hash(request.password)
    const tokenHash = yield* hasher.hash(request.token)
    return yield* tx.withTransaction(Effect.gen(function*() {
      const now = yield* DateTime.now
      const link = yield* repo.redeemLink(tokenHash, now)
      if (Option.isNone(link)) return yield* new Unauthenticated({ message: LINK_UNUSABLE })
      const { member_id, organization_id } = link.value
      const member = Option.filter(yield* members.get(organization_id, member_id), canSignIn)
      if (Option.isNone(member)) return yield* new Unauthenticated({ message: LINK_UNUSABLE })
      yield* repo.setPassword(organization_id, member_id, hash, now)
      // Whoever knew the old password is signed out everywhere.
      yield* repo.revokeMemberSessions(organization_id, member_id, now)
      yield* auditor.record({
        organizationId: organization_id,
        actorId: member_id,
        authMethod: "system",
        action: "member.password_set",
        resourceType: "member",
        resourceId: member_id,
        details: { link: link.value.purpose }
      })
      return yield* startSession(member.value)
    }))
  })

  const refresh = Traced.fn("Sessions.refresh")(function*(refreshToken: string) {
    const presented = yield* hasher.hash(refreshToken)
    const next = yield* Effect.provide(SignInLinks.newToken, context)
    const now = yield* DateTime.now
    const expires = DateTime.addDuration(now, Session.refreshTokenLifetime)
    const rotation = yield* repo.rotate(presented, yield* hasher.hash(next), now, expires)
    switch (rotation._tag) {
      case "Rotated": {
        const { member_id, organization_id } = rotation.session
        // A member deleted or turned away since: the session ends with it.
        if (Option.isNone(Option.filter(yield* members.get(organization_id, member_id), canSignIn))) {
          yield* repo.revokeSession(rotation.session.id, now)
          return yield* new Unauthenticated({ message: SESSION_ENDED })
        }
        return Session.signedIn(rotation.session, next, expires)
      }
      case "Superseded": {
        const rotatedAt = rotation.session.rotated_at
        // Only the token replaced last has a grace (two renewals racing); an older one, or the last
        // one replayed after the grace, means someone else holds a copy, so nobody keeps the session.
        const withinGrace = rotation.latest && rotatedAt !== undefined &&
          DateTime.lessThan(now, DateTime.addDuration(rotatedAt, Session.rotationGrace))
        if (!withinGrace) yield* repo.revokeSession(rotation.session.id, now)
        return yield* new Unauthenticated({ message: SESSION_ENDED })
      }
      case "Unknown":
        return yield* new Unauthenticated({ message: SESSION_ENDED })
    }
  })

  const signOut = Traced.fn("Sessions.signOut")(function*(refreshToken: string) {
    const found = yield* repo.findByRefresh(yield* hasher.hash(refreshToken))
    if (Option.isSome(found)) yield* repo.revokeSession(found.value.id, yield* DateTime.now)
  })

  const linkFor = (organizationId: OrganizationId, memberId: MemberId, purpose: Session.LinkPurpose) =>
    Effect.provide(SignInLinks.issue(organizationId, memberId, purpose), context)

  const issueLink = Traced.fn("Sessions.issueLink")(
    function*(principal: Policy.Principal, memberId: MemberId, request: Session.IssueLink, linkUrl?: Session.LinkUrl) {
      yield* Decision.enforce(Policy.requirePermission(principal, "member:write"))
      const member = Option.filter(
        yield* members.get(principal.organizationId, memberId),
        (m) => m.deleted_at === undefined
      )
      if (Option.isNone(member)) return yield* new NotFound()
      if (member.value.is_service_account) {
        return yield* new InvalidRequest({ message: "a service account signs in with API keys, not a password" })
      }
      // Whoever holds the link becomes the member: the caller must hold everything the member holds.
      const held = yield* roles.heldBy(principal.organizationId, memberId)
      yield* Decision.enforce(Policy.canActOnMember(principal, held.map(Role.toRoleInfo)))
      const link = yield* tx.withTransaction(Effect.gen(function*() {
        const link = yield* linkFor(principal.organizationId, memberId, request.purpose)
        yield* auditor.recordBy(principal, {
          action: "member.sign_in_link",
          resourceType: "member",
          resourceId: memberId,
          details: { purpose: request.purpose }
        })
        return link
      }))
      const handed = yield* Effect.provide(
        SignInLinks.handOver(principal.organizationId, member.value.email, link, linkUrl),
        delivery
      )
      return { member_id: link.member_id, purpose: link.purpose, expires_at: link.expires_at, ...handed }
    }
  )

  const signingKey = Effect.flatMap(Effect.provide(SignInLinks.newToken, context), repo.signingKey)

  return Sessions.of({ signIn, signInWithIdentity, setPassword, refresh, signOut, issueLink, linkFor, signingKey })
})

/**
 * The sign-in use cases over the repositories, hashers and auditor in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Sessions, make)

/**
 * Sign-in for people: passwords, one-time sign-in links (invites and resets) and browser sessions
 * with rotating refresh tokens. The short-lived access token itself is a JWT the http package signs;
 * core decides who may have one.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { MemberId, OrganizationId } from "./Ids.js"
import { Scope } from "./OAuth.js"
import { escapeHtml } from "./ReportHtml.js"
import { SecretHash } from "./Secret.js"

/**
 * How long an access token (the session JWT) lives: the seed's 15 minutes.
 *
 * @since 0.1.0
 * @category constants
 */
export const accessTokenLifetime = Duration.minutes(15)

/**
 * How long a refresh token lives unused; every renewal starts a new period.
 *
 * @since 0.1.0
 * @category constants
 */
export const refreshTokenLifetime = Duration.days(14)

/**
 * How long after its rotation an old refresh token is still only refused, not taken for theft: two
 * tabs renewing at once present the same cookie, and the loser must not sign both out.
 *
 * @since 0.1.0
 * @category constants
 */
export const rotationGrace = Duration.seconds(30)

/**
 * What a sign-in link is for; they differ only in lifetime and audit action.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LinkPurpose = Schema.Literal("invite", "reset")
export type LinkPurpose = typeof LinkPurpose.Type

/**
 * How long a sign-in link can be used: an invite a week, a password reset a day.
 *
 * @since 0.1.0
 * @category constants
 */
export const linkLifetime: { readonly [P in LinkPurpose]: Duration.Duration } = {
  invite: Duration.days(7),
  reset: Duration.days(1)
}

/**
 * The shortest and longest password accepted when one is set (NIST SP 800-63B's floor).
 *
 * @since 0.1.0
 * @category constants
 */
export const passwordLength = { min: 8, max: 256 } as const

/**
 * A new password. The upper bound keeps the KDF's input small; there are no composition rules.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Password = Schema.String.pipe(
  Schema.minLength(passwordLength.min, {
    message: () => `a password has at least ${passwordLength.min} characters`
  }),
  Schema.maxLength(passwordLength.max, {
    message: () => `a password has at most ${passwordLength.max} characters`
  })
)

/**
 * The body of `POST /v2/auth/sign-in`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PasswordSignIn = Schema.Struct({
  email: Schema.String.pipe(Schema.maxLength(254)),
  password: Schema.String.pipe(Schema.maxLength(passwordLength.max)),
  /** Needed only when the address belongs to members of several organizations with this password. */
  organization_id: Schema.optional(OrganizationId)
})
export type PasswordSignIn = typeof PasswordSignIn.Type

/**
 * The body of `POST /v2/auth/password`: a sign-in link's token and the password it sets.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SetPassword = Schema.Struct({
  token: Schema.String.pipe(Schema.maxLength(128)),
  password: Password
})
export type SetPassword = typeof SetPassword.Type

/**
 * The body of `POST /v2/members/{id}/sign-in-link`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IssueLink = Schema.Struct({
  purpose: Schema.optionalWith(LinkPurpose, { default: () => "reset" as const })
})
export type IssueLink = typeof IssueLink.Type

/**
 * A sign-in link as stored: only the hash of its token.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignInLinkRecord = Schema.Struct({
  token_hash: SecretHash,
  organization_id: OrganizationId,
  member_id: MemberId,
  purpose: LinkPurpose,
  expires_at: Schema.DateTimeUtc,
  used_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
})
export type SignInLinkRecord = typeof SignInLinkRecord.Type

/**
 * A sign-in link as issued: the token is shown this once.
 *
 * @since 0.1.0
 * @category models
 */
export interface SignInLink {
  readonly member_id: MemberId
  readonly purpose: LinkPurpose
  readonly token: string
  readonly expires_at: Date
}

/**
 * A link issued by an administrator: also whether it was e-mailed to the member.
 *
 * @since 0.1.0
 * @category models
 */
export interface IssuedLink extends Omit<SignInLink, "token"> {
  /** Absent when the link went by e-mail to the member only. */
  readonly token?: string
  readonly emailed: boolean
}

/**
 * Why a refresh or an access token of a session that has ended is refused.
 *
 * @since 0.1.0
 * @category constants
 */
export const sessionEnded = "session ended: sign in again"

/**
 * A browser session as stored: the hash of its current refresh token and of the one before.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionRecord = Schema.Struct({
  id: Schema.UUID,
  organization_id: OrganizationId,
  member_id: MemberId,
  refresh_hash: SecretHash,
  previous_hash: Schema.optional(SecretHash),
  rotated_at: Schema.optional(Schema.DateTimeUtc),
  expires_at: Schema.DateTimeUtc,
  revoked_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc,
  /** The OAuth client of a grant (`OAuth`); none for a browser's session. */
  client_id: Schema.optional(Schema.String),
  /** What the member granted the client. */
  scopes: Schema.optional(Schema.Array(Scope)),
  /** A grant's PKCE challenge while its authorization code (its first refresh hash) is unexchanged. */
  code_challenge: Schema.optional(Schema.String),
  /** The redirect URI the code was issued for, which the exchange must repeat. */
  redirect_uri: Schema.optional(Schema.String)
})
export type SessionRecord = typeof SessionRecord.Type

/**
 * What a rotation may renew: a browser's session; a grant's authorization code (exchanged once for
 * its first refresh token); or a grant's refresh token. A token of one kind never renews another.
 *
 * @since 0.1.0
 * @category models
 */
export type RotationKind = "session" | "code" | "grant"

/**
 * Whether a session is of a rotation kind.
 *
 * @since 0.1.0
 * @category guards
 */
export const isOfKind = (session: SessionRecord, kind: RotationKind): boolean =>
  kind === "session"
    ? session.client_id === undefined
    : session.client_id !== undefined && (kind === "code") === (session.code_challenge !== undefined)

/**
 * What a renewal found for a presented refresh token.
 *
 * @since 0.1.0
 * @category models
 */
export type Rotation =
  | { readonly _tag: "Rotated"; readonly session: SessionRecord }
  | {
    readonly _tag: "Superseded"
    readonly session: SessionRecord
    /**
     * Whether the presented token is the one replaced last (two renewals racing may present it
     * twice); an older one, presented again, can only be a copy.
     */
    readonly latest: boolean
  }
  | { readonly _tag: "Unknown" }

/**
 * A signed-in member: the refresh token is shown this once (the cookie's value).
 *
 * @since 0.1.0
 * @category models
 */
export interface SignedIn {
  readonly organization_id: OrganizationId
  readonly member_id: MemberId
  /** The session: access tokens name it, and stop working when it ends. */
  readonly session_id: string
  readonly refresh_token: string
  readonly refresh_expires_at: Date
}

/**
 * What renewing (or starting) a session hands back: its new refresh token, valid until `expires`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const signedIn = (
  session: Pick<SessionRecord, "id" | "organization_id" | "member_id">,
  refreshToken: string,
  expires: DateTime.Utc
): SignedIn => ({
  organization_id: session.organization_id,
  member_id: session.member_id,
  session_id: session.id,
  refresh_token: refreshToken,
  refresh_expires_at: DateTime.toDate(expires)
})

/**
 * Builds the URL a sign-in link's token is opened at (the http package knows the public address).
 *
 * @since 0.1.0
 * @category models
 */
export type LinkUrl = (token: string) => string

/**
 * The e-mail that carries a sign-in link: plain words, the link, and when it stops working.
 *
 * @since 0.1.0
 * @category utils
 */
export const linkEmail = (
  purpose: LinkPurpose,
  url: string,
  expiresAt: Date
): { readonly subject: string; readonly text: string; readonly html: string } => {
  const subject = purpose === "invite" ? "You are invited to Sightline" : "Reset your Sightline password"
  const lead = purpose === "invite"
    ? "You have been invited to Sightline. Open this link to choose your password and sign in:"
    : "Someone asked to reset your Sightline password. Open this link to choose a new one:"
  const after = `The link works once, until ${expiresAt.toISOString().slice(0, 16).replace("T", " ")} UTC. ` +
    "If you did not expect this message, you can ignore it."
  return {
    subject,
    text: `${lead}\n\n${url}\n\n${after}\n`,
    html: `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p><p>${
      escapeHtml(after)
    }</p>`
  }
}

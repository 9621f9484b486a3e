/**
 * Issuing sign-in links, shared by the invite (`Members`) and by `Sessions`.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Delivery from "../Delivery.js"
import type { MemberId, OrganizationId } from "../Ids.js"
import * as Secret from "../Secret.js"
import * as Session from "../Session.js"
import { SessionRepo } from "../SessionRepo.js"

/**
 * A new random token in base64url: it travels in a URL (a link's fragment) and in a cookie, where
 * `+`, `/` and `=` would need escaping.
 */
export const newToken = Effect.map(
  Effect.flatMap(Secret.SecretHasher, (hasher) => hasher.generate),
  (secret) => secret.replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "")
)

/** A new link for a member; its earlier unused links stop working. */
export const issue = (
  organizationId: OrganizationId,
  memberId: MemberId,
  purpose: Session.LinkPurpose
): Effect.Effect<Session.SignInLink, never, SessionRepo | Secret.SecretHasher> =>
  Effect.gen(function*() {
    const hasher = yield* Secret.SecretHasher
    const token = yield* newToken
    const now = yield* DateTime.now
    const expires = DateTime.addDuration(now, Session.linkLifetime[purpose])
    yield* (yield* SessionRepo).createLink({
      token_hash: yield* hasher.hash(token),
      organization_id: organizationId,
      member_id: memberId,
      purpose,
      expires_at: expires,
      created_at: now
    })
    return { member_id: memberId, purpose, token, expires_at: DateTime.toDate(expires) }
  })

/**
 * E-mails a link to `email` through the deployment's delivery; whether it was handed to the mail
 * server (false where e-mail is not configured: the link is then only in the API's answer).
 */
export const send = (
  organizationId: OrganizationId,
  email: string,
  link: Session.SignInLink,
  url: string
): Effect.Effect<boolean, never, Delivery.Delivery> =>
  Effect.map(
    Delivery.deliver({
      organizationId,
      ...Session.linkEmail(link.purpose, url, link.expires_at),
      targets: { emails: [email] }
    }),
    (results) => results.length > 0 && results.every((result) => result._tag === "Delivered")
  )

/**
 * Hands a new link over: e-mailed to the member where e-mail is configured (and then not answered:
 * whoever reads the token can sign in as the member, so it goes to their address only), else
 * answered for the caller to pass on. Without `linkUrl` (no address to build) it is answered.
 */
export const handOver = (
  organizationId: OrganizationId,
  email: string,
  link: Session.SignInLink,
  linkUrl: Session.LinkUrl | undefined
): Effect.Effect<{ readonly token?: string; readonly emailed: boolean }, never, Delivery.Delivery> =>
  Effect.gen(function*() {
    if (linkUrl === undefined) return { token: link.token, emailed: false }
    const emailed = yield* send(organizationId, email, link, linkUrl(link.token))
    return (yield* Delivery.Delivery).sendsEmail ? { emailed } : { token: link.token, emailed }
  })

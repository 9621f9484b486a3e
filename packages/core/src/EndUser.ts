/**
 * End users: the people behind a host application, each given a short-lived session that the host's
 * backend mints with its API key (`POST /v2/embed/sessions`) and hands to the embedded widget.
 *
 * An end user acts as the key: as its owner, with its roles, under client attributes that extend the
 * key's (row-level security reads them as it reads a key's). The session narrows the key further:
 * - it may only chat, rate answers and read the dashboards it names (`permissions`, and the route
 *   list the http package keeps), never manage anything and never write SQL of its own;
 * - it reaches only the connectors, dashboards and models it names (each absent: all the key
 *   reaches);
 * - it is used only from the browser origins it names, each one of the organization's
 *   `embed_origins`;
 * - what it makes belongs to its own audience, the fingerprint of the organization and its external
 *   user id, so no other end user, and no key, reaches it. The host lists and deletes an end user's
 *   chats through that audience.
 *
 * The session token is the signed and encrypted `Claims`; the http package seals and opens it, and
 * `Auth.endUserPrincipal` turns it back into a principal on each request, reading the key again, so
 * a revoked or expired key ends its sessions at once.
 *
 * @since 0.1.0
 */
import { sha256 } from "@noble/hashes/sha2"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils"
import * as Schema from "effect/Schema"
import * as ApiKey from "./ApiKey.js"
import * as Audience from "./Audience.js"
import * as Dashboard from "./Dashboard.js"
import { ApiKeyId, ConnectorId, MemberId, OrganizationId } from "./Ids.js"
import type * as Permission from "./Permission.js"

/**
 * What an end user's session may use, beyond the key it was minted with. Each list absent: all
 * that the key reaches.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scope {
  readonly externalUserId: string
  /**
   * The client attributes of the key that minted the session, its own (a JSON object text, `""`
   * without): they set the end user apart from another host tenant's end user of the same id.
   */
  readonly keyClientId: string
  readonly connectorIds?: ReadonlyArray<ConnectorId> | undefined
  readonly dashboards?: ReadonlyArray<string> | undefined
  /** Catalogue model ids. */
  readonly models?: ReadonlyArray<string> | undefined
  /** The browser origins (`scheme://host[:port]`) the session may be used from. */
  readonly origins: ReadonlyArray<string>
}

/**
 * The most an end user's session may do, whatever the key's roles grant: chat (which reads the
 * connectors it asks about). Dashboards are read with `connector:read` as every caller reads them.
 *
 * @since 0.1.0
 * @category constants
 */
export const permissions: ReadonlyArray<Permission.Permission> = ["chat:read", "chat:write", "connector:read"]

/**
 * Does a scope's list allow this item (an absent list allows all)?
 *
 * @since 0.1.0
 * @category utils
 */
export const allows = <A>(list: ReadonlyArray<A> | undefined, item: A): boolean =>
  list === undefined || list.includes(item)

/**
 * The audience of an end user: the hex SHA-256 of the organization, the client attributes of the
 * key that minted its session (its host tenant, for a host that keeps one key per tenant of one
 * member) and its external user id, in a form no client attributes' canonical JSON can take
 * (`Audience.of` hashes JSON objects), so no key shares it and two tenants' users of one id do not.
 *
 * @since 0.1.0
 * @category constructors
 */
export const audienceOf = (organizationId: OrganizationId, keyClientId: string, externalUserId: string): string =>
  bytesToHex(
    sha256(
      utf8ToBytes(
        `${organizationId}\nend-user\n${
          Audience.canonicalJson(keyClientId === "" ? "{}" : keyClientId)
        }\n${externalUserId}`
      )
    )
  )

/**
 * The default and longest lifetimes of a session, in seconds: 15 minutes and an hour.
 *
 * @since 0.1.0
 * @category constants
 */
export const ttlSeconds = { default: 15 * 60, min: 60, max: 60 * 60 } as const

/**
 * The most origins one session names.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxOrigins = 20

/**
 * Is this text a browser origin, exactly as a browser sends it in `Origin` (`https://a.example`,
 * `http://127.0.0.1:8080`: a scheme, a host and a port other than the scheme's default, nothing else)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isOrigin = (text: string): boolean => {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return (url.protocol === "https:" || url.protocol === "http:") && url.origin === text
}

/**
 * A browser origin.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Origin = Schema.String.pipe(
  Schema.filter(isOrigin, {
    message: () => "an origin is a scheme, a host and an optional port, as a browser sends it: https://app.example.com",
    jsonSchema: { pattern: "^https?://[^/]+$" }
  })
)

/**
 * The host's own id for its end user.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExternalUserId = Schema.String.pipe(
  Schema.minLength(1, { message: () => "external_user_id must not be empty" }),
  Schema.maxLength(200, { message: () => "external_user_id must be at most 200 characters" })
)

/**
 * `POST /v2/embed/sessions`: the host's backend mints a session for one of its end users.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MintRequest = Schema.Struct({
  external_user_id: ExternalUserId,
  client_attributes: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
      description: "The end user's client attributes, added to the key's (which they may not change): row-level " +
        "security reads them as `_svc.client_attributes_json.<field>`."
    })
  ),
  connectors: Schema.optional(
    Schema.Array(ConnectorId).annotations({
      description: "The connectors it may ask about; all the key reaches when absent."
    })
  ),
  dashboards: Schema.optional(
    Schema.Array(Dashboard.Name).annotations({
      description: "The dashboards it may view; all the key reaches when absent."
    })
  ),
  models: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description: "The catalogue models it may use; all the key's when absent."
    })
  ),
  ttl_seconds: Schema.optional(
    Schema.Int.pipe(Schema.between(ttlSeconds.min, ttlSeconds.max, {
      message: () => `ttl_seconds must be between ${ttlSeconds.min} and ${ttlSeconds.max}`
    })).annotations({ description: "How long the token lives: 900 when absent, at most 3600, and never past the key." })
  ),
  allowed_origins: Schema.Array(Origin).pipe(
    Schema.minItems(1, { message: () => "allowed_origins must name at least one origin" }),
    Schema.maxItems(maxOrigins, { message: () => `allowed_origins names at most ${maxOrigins} origins` })
  ).annotations({
    description: "The browser origins it may be used from; each one of the organization's embed_origins."
  })
}).annotations({ identifier: "MintEmbedSessionRequest" })
export type MintRequest = typeof MintRequest.Type

/**
 * A minted session, as the widget's `getToken()` returns it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Minted = Schema.Struct({
  token: Schema.String,
  expires_at: Schema.DateTimeUtc,
  external_user_id: Schema.String
}).annotations({ identifier: "EmbedSession" })
export type Minted = typeof Minted.Type

/**
 * What a session token carries, sealed by the http package: the browser can neither read nor change
 * it. `client_attributes` is the merged JSON object text row-level security binds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Claims = Schema.Struct({
  organization_id: OrganizationId,
  member_id: MemberId,
  key_id: ApiKeyId,
  external_user_id: Schema.String,
  client_attributes: ApiKey.ClientId,
  connectors: Schema.optional(Schema.Array(ConnectorId)),
  dashboards: Schema.optional(Schema.Array(Schema.String)),
  models: Schema.optional(Schema.Array(Schema.String)),
  origins: Schema.Array(Schema.String),
  /** Seconds since the epoch. */
  exp: Schema.Int
})
export type Claims = typeof Claims.Type

/**
 * The scope a session's claims give, minted by a key with these client attributes of its own.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scopeOf = (claims: Claims, keyClientId: string): Scope => ({
  externalUserId: claims.external_user_id,
  keyClientId,
  ...(claims.connectors === undefined ? {} : { connectorIds: claims.connectors }),
  ...(claims.dashboards === undefined ? {} : { dashboards: claims.dashboards }),
  ...(claims.models === undefined ? {} : { models: claims.models }),
  origins: claims.origins
})

/**
 * What the widget learns about its own session (`GET /v2/embed/session`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionInfo = Schema.Struct({
  external_user_id: Schema.String,
  connectors: Schema.Array(Schema.Struct({ id: ConnectorId, name: Schema.String })),
  dashboards: Schema.Array(Schema.Struct({ name: Schema.String, title: Schema.String })),
  /** Questions of the reachable connectors' verified queries, to offer as suggestions. */
  suggestions: Schema.Array(Schema.String)
}).annotations({ identifier: "EmbedSessionInfo" })
export type SessionInfo = typeof SessionInfo.Type

/**
 * Core's `SessionRepo` port over SQL: `<prefix>member_passwords`, `<prefix>sign_in_links`,
 * `<prefix>sessions` and `<prefix>server_keys`. Every decision (using a link, renewing a session)
 * is one conditional `UPDATE … RETURNING`, so two processes racing on the same token cannot both win.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { MemberId, OrganizationId } from "@sightline/core/Ids"
import * as OAuth from "@sightline/core/OAuth"
import { SecretHash } from "@sightline/core/Secret"
import { LinkPurpose, type Rotation, type RotationKind } from "@sightline/core/Session"
import { SessionRepo } from "@sightline/core/SessionRepo"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { jsonText, nullable } from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

const LinkRow = Schema.Struct({
  token_hash: SecretHash,
  organization_id: OrganizationId,
  member_id: MemberId,
  purpose: LinkPurpose,
  expires_at: Schema.DateTimeUtcFromDate,
  used_at: nullable(Schema.DateTimeUtcFromDate),
  created_at: Schema.DateTimeUtcFromDate
})

const SessionRow = Schema.Struct({
  id: Schema.UUID,
  organization_id: OrganizationId,
  member_id: MemberId,
  refresh_hash: SecretHash,
  previous_hash: nullable(SecretHash),
  rotated_at: nullable(Schema.DateTimeUtcFromDate),
  expires_at: Schema.DateTimeUtcFromDate,
  revoked_at: nullable(Schema.DateTimeUtcFromDate),
  created_at: Schema.DateTimeUtcFromDate,
  client_id: nullable(Schema.String),
  // Both drivers parse `jsonb`.
  scopes: nullable(Schema.Array(OAuth.Scope)),
  code_challenge: nullable(Schema.String),
  redirect_uri: nullable(Schema.String)
})

const ClientRow = Schema.Struct({
  client_id: Schema.String,
  client_name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  created_at: Schema.DateTimeUtcFromDate
})

// The condition a rotation of each kind puts on the session (`Session.isOfKind`).
const kindCondition: Record<RotationKind, string> = {
  session: "client_id IS NULL",
  code: "client_id IS NOT NULL AND code_challenge IS NOT NULL",
  grant: "client_id IS NOT NULL AND code_challenge IS NULL"
}

const sessionColumns = [
  "id",
  "organization_id",
  "member_id",
  "refresh_hash",
  "previous_hash",
  "rotated_at",
  "expires_at",
  "revoked_at",
  "created_at",
  "client_id",
  "scopes",
  "code_challenge",
  "redirect_uri"
]

// The signing key's row in `server_keys`.
const sessionKeyName = "session"
const isUuid = Schema.is(Schema.UUID)

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<SessionRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const passwords = sql(prefix.name("member_passwords"))
    const links = sql(prefix.name("sign_in_links"))
    const sessions = sql(prefix.name("sessions"))
    const spentHashes = sql(prefix.name("spent_refresh_hashes"))
    const keys = sql(prefix.name("server_keys"))
    const oauthClients = sql(prefix.name("oauth_clients"))
    const columns = sql.literal(sessionColumns.join(", "))
    const date = (at: DateTime.Utc) => DateTime.toDate(at)

    const redeem = SqlSchema.findOne({
      Request: Schema.Struct({ hash: Schema.String, at: Schema.DateFromSelf }),
      Result: LinkRow,
      execute: ({ at, hash }) =>
        sql`UPDATE ${links} SET used_at = ${at}
            WHERE token_hash = ${hash} AND used_at IS NULL AND expires_at > ${at}
            RETURNING token_hash, organization_id, member_id, purpose, expires_at, used_at, created_at`
    })
    const rotated = SqlSchema.findOne({
      Request: Schema.Struct({
        presented: Schema.String,
        next: Schema.String,
        at: Schema.DateFromSelf,
        expires: Schema.DateFromSelf,
        kind: Schema.Literal("session", "code", "grant")
      }),
      Result: SessionRow,
      // Renewing a code spends it: its challenge goes.
      // The replaced hash is remembered as spent in the same statement.
      execute: ({ at, expires, kind, next, presented }) =>
        sql`WITH rotated AS (
              UPDATE ${sessions}
              SET previous_hash = refresh_hash, refresh_hash = ${next}, rotated_at = ${at}, expires_at = ${expires},
                  code_challenge = NULL
              WHERE refresh_hash = ${presented} AND revoked_at IS NULL AND expires_at > ${at}
                AND ${sql.literal(kindCondition[kind])}
              RETURNING ${columns}
            ), spent AS (
              INSERT INTO ${spentHashes} (hash, session_id) SELECT previous_hash, id FROM rotated
              ON CONFLICT (hash) DO NOTHING
            )
            SELECT * FROM rotated`
    })
    const byPrevious = SqlSchema.findOne({
      Request: Schema.Struct({ hash: Schema.String, kind: Schema.Literal("session", "code", "grant") }),
      Result: SessionRow,
      // A spent code is a grant now: the code's replay finds it among grants. Hashes replaced
      // before migration 29 are only the sessions' `previous_hash`.
      execute: ({ hash, kind }) =>
        sql`SELECT ${columns} FROM ${sessions}
            WHERE (previous_hash = ${hash} OR id = (SELECT session_id FROM ${spentHashes} WHERE hash = ${hash}))
              AND ${sql.literal(kindCondition[kind === "code" ? "grant" : kind])} LIMIT 1`
    })
    const clientById = SqlSchema.findOne({
      Request: Schema.String,
      Result: ClientRow,
      execute: (id) =>
        sql`SELECT client_id, client_name, redirect_uris, created_at FROM ${oauthClients} WHERE client_id = ${id}`
    })
    const grantsOf = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: Schema.String, at: Schema.DateFromSelf }),
      Result: SessionRow,
      execute: ({ at, organization_id }) =>
        sql`SELECT ${columns} FROM ${sessions}
            WHERE organization_id = ${organization_id} AND revoked_at IS NULL AND expires_at > ${at}
              AND ${sql.literal(kindCondition.grant)}
            ORDER BY created_at DESC, id DESC`
    })
    const byRefresh = SqlSchema.findOne({
      Request: Schema.String,
      Result: SessionRow,
      execute: (hash) => sql`SELECT ${columns} FROM ${sessions} WHERE refresh_hash = ${hash}`
    })
    const passwordOf = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: Schema.String, member_id: Schema.String }),
      Result: Schema.Struct({ hash: Schema.String }),
      execute: ({ member_id, organization_id }) =>
        sql`SELECT hash FROM ${passwords} WHERE organization_id = ${organization_id} AND member_id = ${member_id}`
    })

    return SessionRepo.of({
      setPassword: (organizationId, memberId, hash, at) =>
        sql`INSERT INTO ${passwords} (organization_id, member_id, hash, updated_at)
            VALUES (${organizationId}, ${memberId}, ${hash}, ${date(at)})
            ON CONFLICT (organization_id, member_id) DO UPDATE SET hash = EXCLUDED.hash, updated_at = EXCLUDED.updated_at`
          .pipe(Effect.asVoid, Effect.orDie),
      passwordHash: (organizationId, memberId) =>
        passwordOf({ organization_id: organizationId, member_id: memberId }).pipe(
          Effect.map(Option.map((row) => row.hash)),
          Effect.orDie
        ),
      createLink: (link) =>
        Effect.zipRight(
          sql`UPDATE ${links} SET used_at = ${date(link.created_at)}
              WHERE organization_id = ${link.organization_id} AND member_id = ${link.member_id} AND used_at IS NULL`,
          sql`INSERT INTO ${links} (token_hash, organization_id, member_id, purpose, expires_at, created_at)
              VALUES (${link.token_hash}, ${link.organization_id}, ${link.member_id}, ${link.purpose},
                      ${date(link.expires_at)}, ${date(link.created_at)})`
        ).pipe(sql.withTransaction, Effect.asVoid, Effect.orDie),
      redeemLink: (tokenHash, at) => Effect.orDie(redeem({ hash: tokenHash, at: date(at) })),
      createSession: (session) =>
        sql`INSERT INTO ${sessions} (id, organization_id, member_id, refresh_hash, expires_at, created_at,
                                     client_id, scopes, code_challenge, redirect_uri)
            VALUES (${session.id}, ${session.organization_id}, ${session.member_id}, ${session.refresh_hash},
                    ${date(session.expires_at)}, ${date(session.created_at)}, ${session.client_id ?? null},
                    ${session.scopes === undefined ? null : jsonText(session.scopes)}::jsonb,
                    ${session.code_challenge ?? null}, ${session.redirect_uri ?? null})`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      rotate: (presented, next, at, expiresAt, kind = "session") =>
        Effect.gen(function*() {
          const done = yield* rotated({ presented, next, at: date(at), expires: date(expiresAt), kind })
          if (Option.isSome(done)) return { _tag: "Rotated", session: done.value } satisfies Rotation
          return Option.match(yield* byPrevious({ hash: presented, kind }), {
            onNone: (): Rotation => ({ _tag: "Unknown" }),
            onSome: (session): Rotation => ({
              _tag: "Superseded",
              session,
              latest: session.previous_hash === presented
            })
          })
        }).pipe(Effect.orDie),
      findByRefresh: (hash) => Effect.orDie(byRefresh(hash)),
      isLive: (organizationId, memberId, id, at) =>
        // A malformed id is no session (the column is a uuid, which would refuse to compare).
        !isUuid(id)
          ? Effect.succeed(false)
          : sql<{ live: number }>`SELECT 1 AS live FROM ${sessions}
              WHERE id = ${id} AND organization_id = ${organizationId} AND member_id = ${memberId}
                AND revoked_at IS NULL AND expires_at > ${date(at)}`.pipe(
            Effect.map((rows) => rows.length > 0),
            Effect.orDie
          ),
      revokeSession: (id, at) =>
        sql`UPDATE ${sessions} SET revoked_at = ${date(at)} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      revokeMemberSessions: (organizationId, memberId, at) =>
        sql`UPDATE ${sessions} SET revoked_at = ${date(at)}
            WHERE organization_id = ${organizationId} AND member_id = ${memberId} AND revoked_at IS NULL`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      createClient: (client) =>
        sql`INSERT INTO ${oauthClients} (client_id, client_name, redirect_uris, created_at)
            VALUES (${client.client_id}, ${client.client_name}, ${jsonText(client.redirect_uris)}::jsonb,
                    ${date(client.created_at)})
            ON CONFLICT (client_id) DO UPDATE
              SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      getClient: (clientId) => Effect.orDie(clientById(clientId)),
      listGrants: (organizationId, at) => Effect.orDie(grantsOf({ organization_id: organizationId, at: date(at) })),
      revokeClientGrants: (organizationId, clientId, at) =>
        sql<{ live: boolean }>`UPDATE ${sessions} SET revoked_at = ${date(at)}
            WHERE organization_id = ${organizationId} AND client_id = ${clientId} AND revoked_at IS NULL
            RETURNING expires_at > ${date(at)} AS live`.pipe(
          Effect.map((rows) => rows.filter((row) => row.live).length),
          Effect.orDie
        ),
      signingKey: (candidate) =>
        // Two statements, not one: the SELECT must see a row another process inserted meanwhile,
        // which a single statement's snapshot would not.
        Effect.zipRight(
          sql`INSERT INTO ${keys} (name, value, created_at) VALUES (${sessionKeyName}, ${candidate}, now())
              ON CONFLICT (name) DO NOTHING`,
          sql<{ value: string }>`SELECT value FROM ${keys} WHERE name = ${sessionKeyName}`
        ).pipe(Effect.map((rows) => rows[0]!.value), Effect.orDie)
    })
  }
)

/**
 * The repository layer over the `SqlClient` and `TablePrefix` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  SessionRepo,
  make
)

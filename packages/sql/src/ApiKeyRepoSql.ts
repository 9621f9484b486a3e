/**
 * Core's `ApiKeyRepo` port over SQL (`<prefix>api_keys`).
 *
 * Only the SHA-256 of a secret is stored (`secret_hash`, under a unique index that authentication
 * looks keys up by). Status is never stored: it is derived from `revoked_at` and `expires_at`, so
 * a revocation is one committed UPDATE, and every lookup that starts after it commits sees it.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ApiKeyRecord } from "@sightline/core/ApiKey"
import { ApiKeyRepo, keyset } from "@sightline/core/ApiKeyRepo"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { ApiKeyId, MemberId, OrganizationId } from "@sightline/core/Ids"
import { SecretHash } from "@sightline/core/Secret"
import * as Traced from "@sightline/core/Traced"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { heldRoleIds, memberColumns, roleColumns } from "./internal/accessSql.js"
import * as KeysetPage from "./internal/keysetPage.js"
import * as PoolRead from "./internal/poolRead.js"
import * as RowSql from "./internal/rowSql.js"
import { isUniqueViolation } from "./internal/sqlState.js"
import { MemberFromRow } from "./MemberRepoSql.js"
import { RoleFromRow } from "./RoleRepoSql.js"
import { TablePrefix } from "./TablePrefix.js"

// How many keys' decoded credentials a repository keeps.
const maxDecodedCredentials = 1_000

/**
 * A row of `<prefix>api_keys` ↔ an `ApiKeyRecord`: `timestamptz` columns come back as `Date`s, and a
 * NULL column is an absent optional field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeyFromRow = Schema.transform(
  Schema.Struct({
    ...ApiKeyRecord.fields,
    created_at: Schema.DateTimeUtcFromDate,
    expires_at: Schema.DateTimeUtcFromDate,
    revoked_at: Schema.optionalWith(Schema.DateTimeUtcFromDate, { nullable: true }),
    rotated_from: Schema.optionalWith(ApiKeyId, { nullable: true }),
    parent_key_id: Schema.optionalWith(ApiKeyId, { nullable: true })
  }),
  Schema.typeSchema(ApiKeyRecord),
  { strict: true, decode: (row) => TrustedSchema.make(ApiKeyRecord, row), encode: (record) => record }
)

const KeyRef = Schema.Struct({ organization_id: OrganizationId, id: ApiKeyId })

/** What one page query of `list` needs. */
const ListRequest = Schema.Struct({
  organization_id: OrganizationId,
  member_ids: Schema.optional(Schema.Array(MemberId)),
  include_revoked: Schema.Boolean,
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(ApiKeyId),
  limit: Schema.Int
})

/**
 * The API key repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ApiKeyRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const compiledRead = yield* PoolRead.compiledReader
    const prefix = yield* TablePrefix
    const apiKeys = sql(prefix.name("api_keys"))
    const idKey = prefix.name("api_keys_pkey")
    const hashKey = prefix.name("api_keys_secret_hash_key")
    // `assumed_roles` as `text[]`, which both drivers parse to strings.
    const columns = sql.literal(
      "id, organization_id, member_id, name, client_id, assumed_roles::text[] AS assumed_roles, inherit_all_roles, " +
        "full_member_access, created_at, expires_at, revoked_at, secret_hash, created_by, rotated_from, parent_key_id"
    )

    const fieldNames = [
      "member_id",
      "name",
      "client_id",
      "assumed_roles",
      "inherit_all_roles",
      "full_member_access",
      "created_at",
      "expires_at",
      "revoked_at",
      "secret_hash",
      "created_by",
      "rotated_from",
      "parent_key_id"
    ]
    const insert = SqlSchema.void({
      Request: ApiKeyFromRow,
      execute: (row) =>
        sql`INSERT INTO ${apiKeys} ${sql.insert(RowSql.values(row, ["id", "organization_id", ...fieldNames]))}`
    })
    // Every column but the identity is replaced, so that an optional field left out becomes NULL.
    const replace = SqlSchema.findOne({
      Request: ApiKeyFromRow,
      Result: Schema.Struct({ id: ApiKeyId }),
      execute: (row) =>
        sql`UPDATE ${apiKeys} SET ${sql.update(RowSql.values(row, fieldNames))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id}
            RETURNING id`
    })
    const findById = (lock: boolean) =>
      SqlSchema.findOne({
        Request: KeyRef,
        Result: ApiKeyFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${columns} FROM ${apiKeys} WHERE organization_id = ${organization_id} AND id = ${id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const get = findById(false)
    const getForUpdate = findById(true)
    // The credential's columns, prefixed by table.
    const keyNames = ["id", "organization_id", ...fieldNames]
    const credentialColumns = sql.literal([
      ...keyNames.map((c) => c === "assumed_roles" ? "k.assumed_roles::text[] AS k_assumed_roles" : `k.${c} AS k_${c}`),
      ...memberColumns.map((c) => `m.${c} AS m_${c}`),
      ...roleColumns.map((c) => `r.${c} AS r_${c}`)
    ].join(", "))
    const members = sql(prefix.name("members"))
    const roles = sql(prefix.name("roles"))
    const decodeKey = Schema.decodeUnknown(ApiKeyFromRow)
    const decodeMember = Schema.decodeUnknown(MemberFromRow)
    const decodeRole = Schema.decodeUnknown(RoleFromRow)
    // Authentication reads the credential on every request, so that a revoked key, a removed role or
    // a deleted member takes effect at once. What it reads each time is the credential's version:
    // the row version (`xmin`, the transaction that wrote the row) of the key, of its owner and of
    // each role held, with the roles' ids. Any write of one of those rows (a revocation, a soft
    // delete, an edited role) gives it a new `xmin`, and a role gained or lost changes the list, so
    // an unchanged version is an unchanged credential, and its decoding is kept. Only a new version
    // reads the rows themselves, as one text column of JSON (35 columns parsed by the driver cost
    // about a third of authentication's CPU). Built on every request, that JSON cost PostgreSQL 0.108 ms
    // of CPU against the version's 0.083 (`bench:http`'s key; see docs/decisions.md).
    const decoded = new Map<string, { readonly version: string; readonly credential: ApiKeyRepo.Credential }>()
    const decodeCredential = (rows: readonly [Record<string, unknown>, ...Array<Record<string, unknown>>]) =>
      Effect.gen(function*() {
        const [first] = rows
        return {
          key: yield* decodeKey(RowSql.fieldsOf(first, "k_", keyNames)),
          member: first.m_id === null
            ? Option.none()
            : Option.some(yield* decodeMember(RowSql.fieldsOf(first, "m_", memberColumns))),
          roles: yield* Effect.forEach(
            rows.filter((row) => row.r_id !== null),
            (row) => decodeRole(RowSql.fieldsOf(row, "r_", roleColumns))
          )
        } satisfies ApiKeyRepo.Credential
      })
    // JSON carries timestamps as text: these columns become the `Date`s the row schemas decode.
    const credentialDates = [
      "k_created_at",
      "k_expires_at",
      "k_revoked_at",
      "m_deleted_at",
      "m_created_at",
      "r_created_at",
      "r_updated_at"
    ]
    // The key by its hash (unique index, whichever organization it lives in), its owner, and the
    // owner's live roles: one row each, none for a member without roles.
    const credentialRows = (hash: SecretHash) =>
      sql`FROM ${apiKeys} k
          LEFT JOIN ${members} m ON m.organization_id = k.organization_id AND m.id = k.member_id
          LEFT JOIN ${roles} r ON r.organization_id = k.organization_id AND r.id IN (${
        heldRoleIds(sql, prefix, sql.literal("k.organization_id"), sql.literal("k.member_id"))
      })
          WHERE k.secret_hash = ${hash}`
    const versionOf = compiledRead((hash: SecretHash) =>
      sql<{ readonly version: string | null }>`SELECT string_agg(
            k.xmin::text || ':' || coalesce(m.xmin::text, '') || ':' || coalesce(r.id::text, '') || ':' ||
              coalesce(r.xmin::text, ''),
            ',' ORDER BY r.created_at, r.id) AS version
          ${credentialRows(hash)}`
    )
    const credentialOf = compiledRead((hash: SecretHash) =>
      sql<{ readonly credential: string | null }>`SELECT json_agg(c ORDER BY c.r_created_at, c.r_id)::text AS credential
          FROM (SELECT ${credentialColumns} ${credentialRows(hash)}) c`
    )
    const findCredential = (hash: SecretHash) =>
      Effect.gen(function*() {
        const [current] = yield* versionOf(hash)
        const version = current?.version ?? null
        if (version === null) return Option.none<ApiKeyRepo.Credential>()
        const kept = decoded.get(hash)
        if (kept !== undefined && kept.version === version) return Option.some(kept.credential)
        // Read after the version, the rows are as new as it or newer: kept under it, a newer state is
        // read again on the next request, whose version differs; an older one is never kept.
        const [found] = yield* credentialOf(hash)
        const text = found?.credential ?? null
        if (text === null) return Option.none<ApiKeyRepo.Credential>()
        const rows = RowSql.datesIn(JSON.parse(text) as Array<Record<string, unknown>>, credentialDates)
        if (!Arr.isNonEmptyReadonlyArray(rows)) return Option.none<ApiKeyRepo.Credential>()
        const credential = yield* decodeCredential(rows)
        // Keys in use are few; past this many, start over rather than grow without end.
        if (decoded.size >= maxDecodedCredentials) decoded.clear()
        decoded.set(hash, { version, credential })
        return Option.some(credential)
      }).pipe(Effect.orDie)
    // Newest first. The row comparison `(created_at, id) < (…)` continues strictly after the cursor's
    // row and is an index condition on `(organization_id[, member_id], created_at, id)`, read backwards.
    const page = SqlSchema.findAll({
      Request: ListRequest,
      Result: ApiKeyFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${apiKeys} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...(request.member_ids === undefined ? [] : [sql`member_id IN ${sql.in(request.member_ids)}`]),
            ...(request.include_revoked ? [] : [sql`revoked_at IS NULL`]),
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(created_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })

    return ApiKeyRepo.of({
      create: Traced.fn("ApiKeyRepoSql.create")((record) =>
        insert(record).pipe(
          Effect.catchIf(
            isUniqueViolation(idKey),
            () => new Conflict({ message: `an API key with id ${record.id} already exists` })
          ),
          Effect.catchIf(
            isUniqueViolation(hashKey),
            () => new Conflict({ message: "an API key with this secret already exists" })
          ),
          // A savepoint inside a caller's transaction: after a Conflict, PostgreSQL would otherwise
          // refuse every further statement of that transaction.
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      get: Traced.fn("ApiKeyRepoSql.get")((organizationId, id) =>
        Effect.orDie(get({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("ApiKeyRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(getForUpdate({ organization_id: organizationId, id }))
      ),
      // Untraced: it runs on every authenticated request.
      findCredential,
      update: Traced.fn("ApiKeyRepoSql.update")((record) =>
        Effect.flatMap(
          Effect.orDie(replace(record)),
          Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: () => Effect.void })
        )
      ),
      revokeDescendants: Traced.fn("ApiKeyRepoSql.revokeDescendants")((organizationId, parentId, at) =>
        sql<{ id: ApiKeyId }>`WITH RECURSIVE tree (id) AS (
            SELECT id FROM ${apiKeys} WHERE organization_id = ${organizationId} AND parent_key_id = ${parentId}
            UNION
            SELECT k.id FROM ${apiKeys} k JOIN tree t ON k.parent_key_id = t.id WHERE k.organization_id = ${organizationId}
          )
          UPDATE ${apiKeys} SET revoked_at = ${DateTime.toDate(at)}
          WHERE organization_id = ${organizationId} AND id IN (SELECT id FROM tree) AND revoked_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie)
      ),
      reparent: Traced.fn("ApiKeyRepoSql.reparent")((organizationId, fromId, toId) =>
        sql`UPDATE ${apiKeys} SET parent_key_id = ${toId}
            WHERE organization_id = ${organizationId} AND parent_key_id = ${fromId}`.pipe(Effect.asVoid, Effect.orDie)
      ),
      list: Traced.fn("ApiKeyRepoSql.list")((organizationId, options) =>
        // `IN ()` is not SQL: no owners means no keys.
        options.memberIds !== undefined && options.memberIds.length === 0
          ? Effect.succeed({ items: [], nextCursor: undefined })
          : KeysetPage.page(
            { after: options.after, limit: options.limit, id: KeysetPage.uuidId(ApiKeyId.make), keyset },
            (position) =>
              Effect.orDie(page({
                organization_id: organizationId,
                ...(options.memberIds === undefined ? {} : { member_ids: options.memberIds }),
                include_revoked: options.includeRevoked,
                ...position
              }))
          )
      )
    })
  }
)

/**
 * `ApiKeyRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ApiKeyRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(ApiKeyRepo, make)

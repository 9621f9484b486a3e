/**
 * Core's `SandboxRepo` port over SQL (`<prefix>sandboxes`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { ChatId, MemberId, OrganizationId, SandboxId } from "@sightline/core/Ids"
import { keyset, RUNNER_GONE, Sandbox, StatusFilter } from "@sightline/core/Sandbox"
import { SandboxRepo } from "@sightline/core/SandboxRepo"
import * as Traced from "@sightline/core/Traced"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>sandboxes` ↔ a `Sandbox`: `timestamptz` columns come back as `Date`s, and a NULL
 * column is an absent optional field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxFromRow = Schema.transform(
  Schema.Struct({
    ...Sandbox.fields,
    chat_id: Schema.optionalWith(ChatId, { nullable: true }),
    audience: RowSql.nullable(Schema.String),
    started_at: Schema.DateTimeUtcFromDate,
    released_at: Schema.optionalWith(Schema.DateTimeUtcFromDate, { nullable: true }),
    last_seen_at: Schema.optionalWith(Schema.DateTimeUtcFromDate, { nullable: true }),
    runner_id: Schema.optionalWith(Schema.String, { nullable: true }),
    library_ref: Schema.optionalWith(Schema.String, { nullable: true }),
    last_used_at: Schema.optionalWith(Schema.DateTimeUtcFromDate, { nullable: true }),
    stop_reason: Schema.optionalWith(Schema.String, { nullable: true })
  }),
  Schema.typeSchema(Sandbox),
  { strict: true, decode: (row) => new Sandbox(row, true), encode: (sandbox) => sandbox }
)

const SandboxKey = Schema.Struct({ organization_id: OrganizationId, sandbox_id: SandboxId })
const Written = Schema.Struct({ sandbox_id: SandboxId })

/** What one page query of `list` needs. */
const ListRequest = Schema.Struct({
  organization_id: OrganizationId,
  status: StatusFilter,
  member_id: Schema.optional(MemberId),
  audience: Schema.optional(Schema.String),
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(SandboxId),
  limit: Schema.Int
})

/**
 * The sandbox repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<SandboxRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const sandboxes = sql((yield* TablePrefix).name("sandboxes"))
    const fieldNames = [
      "member_id",
      "chat_id",
      "status",
      "started_at",
      "released_at",
      "last_seen_at",
      "runner_id",
      "library_ref",
      "last_used_at",
      "stop_reason"
    ]
    // The audience is set when the sandbox is made and never changes, so updates leave it alone.
    const keyNames = ["sandbox_id", "organization_id", "audience"]
    const columns = sql.literal(RowSql.selectList([...keyNames, ...fieldNames]))

    // `ON CONFLICT DO NOTHING` instead of catching the unique violation: no error, so a caller's
    // transaction goes on after a `Conflict` without needing a savepoint.
    const insert = SqlSchema.findOne({
      Request: SandboxFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${sandboxes} ${
          sql.insert({ ...RowSql.values(row, [...keyNames, ...fieldNames]), audience: row.audience ?? "" })
        }
            ON CONFLICT (sandbox_id) DO NOTHING RETURNING sandbox_id`
    })
    const find = (lock: boolean) =>
      SqlSchema.findOne({
        Request: SandboxKey,
        Result: SandboxFromRow,
        execute: ({ organization_id, sandbox_id }) =>
          sql`SELECT ${columns} FROM ${sandboxes}
              WHERE organization_id = ${organization_id} AND sandbox_id = ${sandbox_id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const findById = find(false)
    const findForUpdate = find(true)
    const replace = SqlSchema.findOne({
      Request: SandboxFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${sandboxes} SET ${sql.update(RowSql.values(row, fieldNames))}
            WHERE organization_id = ${row.organization_id} AND sandbox_id = ${row.sandbox_id}
            RETURNING sandbox_id`
    })
    // Newest first. The row comparison continues strictly after the cursor's row and is an index
    // condition on `(organization_id[, status | member_id], started_at, sandbox_id)`.
    const page = SqlSchema.findAll({
      Request: ListRequest,
      Result: SandboxFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${sandboxes} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...(request.status === "all" ? [] : [sql`status = ${request.status}`]),
            ...(request.member_id === undefined ? [] : [sql`member_id = ${request.member_id}`]),
            ...(request.audience === undefined ? [] : [sql`audience = ${request.audience}`]),
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(started_at, sandbox_id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY started_at DESC, sandbox_id DESC LIMIT ${request.limit}`
    })

    const release = SqlSchema.findAll({
      Request: Schema.Struct({ seen_before: Schema.DateTimeUtc, at: Schema.DateTimeUtc }),
      Result: Written,
      execute: (request) =>
        sql`UPDATE ${sandboxes} SET status = 'stopped', released_at = ${request.at}::timestamptz,
            stop_reason = ${RUNNER_GONE}
          WHERE status = 'running' AND coalesce(last_seen_at, started_at) < ${request.seen_before}::timestamptz
          RETURNING sandbox_id`
    })
    const forChat = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, member_id: MemberId, chat_id: ChatId }),
      Result: SandboxFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${sandboxes}
            WHERE organization_id = ${request.organization_id} AND member_id = ${request.member_id}
              AND chat_id = ${request.chat_id} AND status = 'running'
            ORDER BY started_at DESC LIMIT 1`
    })
    const idle = SqlSchema.findAll({
      Request: Schema.DateTimeUtc,
      Result: SandboxFromRow,
      execute: (before) =>
        sql`SELECT ${columns} FROM ${sandboxes}
            WHERE status = 'running' AND coalesce(last_used_at, started_at) < ${before}::timestamptz`
    })
    const releaseRunner = SqlSchema.findAll({
      Request: Schema.Struct({ runner_id: Schema.String, at: Schema.DateTimeUtc, reason: Schema.String }),
      Result: Written,
      execute: (request) =>
        sql`UPDATE ${sandboxes} SET status = 'stopped', released_at = ${request.at}::timestamptz,
            stop_reason = ${request.reason}
          WHERE status = 'running' AND runner_id = ${request.runner_id} RETURNING sandbox_id`
    })
    const Counted = Schema.Struct({ organization: Schema.NumberFromString, member: Schema.NumberFromString })

    const get = (lock: boolean) => (organizationId: OrganizationId, id: SandboxId) =>
      Effect.orDie((lock ? findForUpdate : findById)({ organization_id: organizationId, sandbox_id: id }))

    return SandboxRepo.of({
      create: Traced.fn("SandboxRepoSql.create")(function*(sandbox) {
        const written = yield* Effect.orDie(insert(sandbox))
        if (Option.isNone(written)) {
          return yield* new Conflict({ message: `a sandbox with id ${sandbox.sandbox_id} already exists` })
        }
      }),
      get: Traced.fn("SandboxRepoSql.get")(get(false)),
      getForUpdate: Traced.fn("SandboxRepoSql.getForUpdate")(get(true)),
      list: Traced.fn("SandboxRepoSql.list")((organizationId, options) =>
        KeysetPage.page(
          { after: options.after, limit: options.limit, id: KeysetPage.uuidId(SandboxId.make), keyset },
          (position) =>
            Effect.orDie(page({
              organization_id: organizationId,
              status: options.status,
              ...(options.memberId === undefined ? {} : { member_id: options.memberId }),
              ...(options.audience === undefined ? {} : { audience: options.audience }),
              ...position
            }))
        )
      ),
      update: Traced.fn("SandboxRepoSql.update")(function*(sandbox) {
        if (Option.isNone(yield* Effect.orDie(replace(sandbox)))) return yield* new NotFound()
      }),
      releaseStale: Traced.fn("SandboxRepoSql.releaseStale")(function*(seenBefore, at) {
        const released = yield* Effect.orDie(release({ seen_before: seenBefore, at }))
        return released.length
      }),
      touch: (organizationId, id, at) =>
        Effect.orDie(
          sql`UPDATE ${sandboxes} SET last_used_at = ${DateTime.formatIso(at)}::timestamptz
              WHERE organization_id = ${organizationId} AND sandbox_id = ${id} AND status = 'running'`
        ).pipe(Effect.asVoid),
      findForChat: (organizationId, memberId, chatId) =>
        Effect.orDie(forChat({ organization_id: organizationId, member_id: memberId, chat_id: chatId })),
      countRunning: (organizationId, memberId) =>
        Effect.orDie(Effect.flatMap(
          sql`SELECT count(*)::text AS organization, count(*) FILTER (WHERE member_id = ${memberId})::text AS member
              FROM ${sandboxes} WHERE organization_id = ${organizationId} AND status = 'running'`,
          (rows) => Schema.decodeUnknown(Counted)(rows[0])
        )),
      idle: (before) => Effect.orDie(idle(before)),
      heartbeatRunner: (runnerId, at) =>
        Effect.orDie(
          sql`UPDATE ${sandboxes} SET last_seen_at = ${DateTime.formatIso(at)}::timestamptz
              WHERE runner_id = ${runnerId} AND status = 'running'`
        ).pipe(Effect.asVoid),
      releaseRunner: (runnerId, at, reason) =>
        Effect.map(Effect.orDie(releaseRunner({ runner_id: runnerId, at, reason })), (rows) => rows.length)
    })
  }
)

/**
 * `SandboxRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SandboxRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  SandboxRepo,
  make
)

/**
 * Core's `ChangeRepo` port over SQL: `<prefix>changes`, `<prefix>change_revisions`,
 * `<prefix>change_approvals`, and the per-organization number counter `<prefix>change_counters`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ApprovalRecord, ChangeRecord, ChangeStatus, emptyCounts, Revision } from "@sightline/core/Change"
import type { StatusCounts } from "@sightline/core/Change"
import { Evaluation } from "@sightline/core/ChangeEvaluation"
import { ChangeRepo, keysetOf } from "@sightline/core/ChangeRepo"
import { Conflict } from "@sightline/core/Errors"
import { ChangeId, ChatId, OrganizationId } from "@sightline/core/Ids"
import * as Pagination from "@sightline/core/Pagination"
import * as Traced from "@sightline/core/Traced"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { isUniqueViolation } from "./internal/sqlState.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>changes` ↔ a `ChangeRecord` (NULL columns are absent optional fields).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangeFromRow = Schema.transform(
  Schema.Struct({
    ...ChangeRecord.fields,
    base_ref: Schema.optionalWith(Schema.String, { nullable: true }),
    chat_id: Schema.optionalWith(ChatId, { nullable: true }),
    evaluation: RowSql.nullable(Evaluation),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(ChangeRecord),
  { strict: true, decode: (row) => new ChangeRecord(row, true), encode: (change) => change }
)

/**
 * A row of `<prefix>change_revisions` ↔ a `Revision`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RevisionFromRow = Schema.transform(
  Schema.Struct({
    ...Revision.fields,
    base_ref: Schema.optionalWith(Schema.String, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(Revision),
  { strict: true, decode: (row) => new Revision(row, true), encode: (revision) => revision }
)

/**
 * A row of `<prefix>change_approvals` ↔ an `ApprovalRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApprovalFromRow = Schema.transform(
  Schema.Struct({ ...ApprovalRecord.fields, created_at: Schema.DateTimeUtcFromDate }),
  Schema.typeSchema(ApprovalRecord),
  { strict: true, decode: (row) => new ApprovalRecord(row, true), encode: (approval) => approval }
)

const evaluationText = (row: typeof ChangeFromRow.Encoded) =>
  row.evaluation === undefined || row.evaluation === null ? null : RowSql.jsonText(row.evaluation)

const ChangeKey = Schema.Struct({ organization_id: OrganizationId, id: ChangeId })

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A keyset position in the columns' types. Cursors are ours (`keysetOf`), so a position that is not
 * a timestamp and a lowercase UUID was forged: it names no row, and its page is empty.
 */
const positionOf = (keyset: Pagination.Keyset): Option.Option<{ readonly at: Date; readonly id: string }> =>
  Option.flatMap(
    DateTime.make(keyset.at),
    (at) => uuidPattern.test(keyset.id) ? Option.some({ at: DateTime.toDate(at), id: keyset.id }) : Option.none()
  )

/** Rows read per round trip when a listing or a count has to test every row in JavaScript. */
const maxBatch = 1000

/**
 * The change repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ChangeRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const changes = sql(prefix.name("changes"))
    const counters = sql(prefix.name("change_counters"))
    const revisionsTable = sql(prefix.name("change_revisions"))
    const approvalsTable = sql(prefix.name("change_approvals"))
    const changeKeys = [prefix.name("changes_pkey"), prefix.name("changes_number_key")]
    const revisionKey = prefix.name("change_revisions_pkey")
    const columns = sql.literal(
      "id, organization_id, number, author_id, author_email, title, description, status, git_ref, base_ref, " +
        "revision, touched_paths, ai_generated, chat_id, approval_count, required_approvals, auto_approved, " +
        "checks, evaluation, created_at, updated_at"
    )

    const insert = SqlSchema.void({
      Request: ChangeFromRow,
      execute: (row) =>
        sql`INSERT INTO ${changes} ${
          sql.insert({ ...row, checks: RowSql.jsonText(row.checks ?? []), evaluation: evaluationText(row) })
        }`
    })
    const findById = SqlSchema.findOne({
      Request: ChangeKey,
      Result: ChangeFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${changes} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const findByIdForUpdate = SqlSchema.findOne({
      Request: ChangeKey,
      Result: ChangeFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${changes} WHERE organization_id = ${organization_id} AND id = ${id} FOR UPDATE`
    })
    const findByNumber = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, number: Schema.Int }),
      Result: ChangeFromRow,
      execute: ({ number, organization_id }) =>
        sql`SELECT ${columns} FROM ${changes} WHERE organization_id = ${organization_id} AND number = ${number}`
    })
    // Every column but the key is replaced; absent optional fields become NULL.
    const replace = SqlSchema.void({
      Request: ChangeFromRow,
      execute: (row) =>
        sql`UPDATE ${changes} SET ${
          sql.update({
            ...row,
            base_ref: row.base_ref ?? null,
            chat_id: row.chat_id ?? null,
            checks: RowSql.jsonText(row.checks ?? []),
            evaluation: evaluationText(row)
          }, [
            "id",
            "organization_id"
          ])
        } WHERE organization_id = ${row.organization_id} AND id = ${row.id}`
    })
    // The counter row is locked by the upsert until the caller's transaction ends, so numbers are
    // handed out one caller at a time; `greatest` keeps them above numbers stored without it.
    const reserveNumber = SqlSchema.single({
      Request: OrganizationId,
      Result: Schema.Struct({ last_number: Schema.Int }),
      execute: (organizationId) => {
        const highest = sql`(SELECT coalesce(max(number), 0) FROM ${changes} WHERE organization_id = ${organizationId})`
        return sql`INSERT INTO ${counters} AS c (organization_id, last_number)
                   VALUES (${organizationId}, ${highest} + 1)
                   ON CONFLICT (organization_id) DO UPDATE SET last_number = greatest(c.last_number, ${highest}) + 1
                   RETURNING last_number`
      }
    })
    // One keyset batch, newest first. `NOT auto_approved` is spelled as the partial index's predicate.
    const batch = SqlSchema.findAll({
      Request: Schema.Struct({
        organization_id: OrganizationId,
        statuses: Schema.Array(ChangeStatus),
        include_auto_approved: Schema.Boolean,
        after: Schema.optional(Schema.Struct({ at: Schema.DateFromSelf, id: Schema.String })),
        limit: Schema.Int
      }),
      Result: ChangeFromRow,
      execute: ({ after, include_auto_approved, limit, organization_id, statuses }) =>
        sql`SELECT ${columns} FROM ${changes} WHERE ${
          sql.and([
            sql`organization_id = ${organization_id}`,
            ...(include_auto_approved ? [] : [sql`NOT auto_approved`]),
            ...(statuses.length === 0 ? [] : [sql`status IN ${sql.in(statuses)}`]),
            ...(after === undefined ? [] : [sql`(created_at, id) < (${after.at}::timestamptz, ${after.id}::uuid)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })
    const insertRevision = SqlSchema.void({
      Request: RevisionFromRow,
      execute: (row) => sql`INSERT INTO ${revisionsTable} ${sql.insert(row)}`
    })
    const findRevisions = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, change_id: ChangeId }),
      Result: RevisionFromRow,
      execute: ({ change_id, organization_id }) =>
        sql`SELECT organization_id, change_id, revision, git_ref, base_ref, touched_paths, created_at
            FROM ${revisionsTable}
            WHERE organization_id = ${organization_id} AND change_id = ${change_id}
            ORDER BY revision`
    })
    // The primary key decides "already approved": a concurrent duplicate waits for the first insert
    // to commit and then inserts nothing, so each approver is recorded exactly once.
    const insertApproval = SqlSchema.findAll({
      Request: ApprovalFromRow,
      Result: Schema.Struct({ revision: Schema.Int }),
      execute: (row) => sql`INSERT INTO ${approvalsTable} ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING revision`
    })
    const findApprovals = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, change_id: ChangeId }),
      Result: ApprovalFromRow,
      execute: ({ change_id, organization_id }) =>
        sql`SELECT organization_id, change_id, revision, approver_id, created_at FROM ${approvalsTable}
            WHERE organization_id = ${organization_id} AND change_id = ${change_id}
            ORDER BY created_at, revision, approver_id`
    })

    /**
     * Reads changes newest first after `after`, in batches, keeping those `keep` accepts, until
     * `wanted` are kept or none are left. `readable` runs in JavaScript, so SQL cannot page on it:
     * batches grow while the predicate rejects rows, so that pages stay full without reading a page
     * of rows per round trip.
     */
    const scan = (
      organizationId: OrganizationId,
      filter: {
        readonly statuses: ReadonlyArray<ChangeStatus>
        readonly includeAutoApproved: boolean
        readonly keep: (change: ChangeRecord) => boolean
      },
      after: Option.Option<{ readonly at: Date; readonly id: string }>,
      wanted: number,
      onRow: (change: ChangeRecord) => void
    ) =>
      Effect.gen(function*() {
        let kept = 0
        let position = after
        let size = Math.min(Math.max(wanted, 1), maxBatch)
        while (kept < wanted) {
          const rows = yield* batch({
            organization_id: organizationId,
            statuses: filter.statuses,
            include_auto_approved: filter.includeAutoApproved,
            ...(Option.isSome(position) ? { after: position.value } : {}),
            limit: size
          })
          for (const row of rows) {
            if (kept < wanted && filter.keep(row)) {
              kept++
              onRow(row)
            }
          }
          if (rows.length < size) break
          const last = rows[rows.length - 1]!
          position = Option.some({ at: DateTime.toDate(last.created_at), id: last.id })
          size = Math.min(size * 2, maxBatch)
        }
      })

    const conflictOf = (change: ChangeRecord) => (error: unknown) =>
      isUniqueViolation(changeKeys[0]!)(error)
        ? new Conflict({ message: `change ${change.id} already exists` })
        : new Conflict({ message: `change number ${change.number} is already taken` })

    return ChangeRepo.of({
      create: Traced.fn("ChangeRepoSql.create")((change) =>
        insert(change).pipe(
          Effect.catchIf(
            (error) => changeKeys.some((key) => isUniqueViolation(key)(error)),
            (error) => Effect.fail(conflictOf(change)(error))
          ),
          // A savepoint inside a caller's transaction, which survives the Conflict.
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      get: Traced.fn("ChangeRepoSql.get")((organizationId, id) =>
        Effect.orDie(findById({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("ChangeRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(findByIdForUpdate({ organization_id: organizationId, id }))
      ),
      getByNumber: Traced.fn("ChangeRepoSql.getByNumber")((organizationId, number) =>
        // A number no change can have (not an int32) is simply not found.
        Number.isInteger(number) && number > 0 && number <= 2147483647
          ? Effect.orDie(findByNumber({ organization_id: organizationId, number }))
          : Effect.succeedNone
      ),
      nextNumber: Traced.fn("ChangeRepoSql.nextNumber")((organizationId) =>
        Effect.map(Effect.orDie(reserveNumber(organizationId)), (row) => row.last_number)
      ),
      update: Traced.fn("ChangeRepoSql.update")((change) => Effect.orDie(replace(change))),
      list: Traced.fn("ChangeRepoSql.list")((organizationId, options) => {
        const after = options.after === undefined ? Option.none() : positionOf(options.after)
        if (options.after !== undefined && Option.isNone(after)) {
          return Effect.succeed<Pagination.Page<ChangeRecord>>({ items: [], nextCursor: undefined })
        }
        const rows: Array<ChangeRecord> = []
        // One row beyond the page says whether another page exists.
        return scan(
          organizationId,
          { statuses: options.statuses, includeAutoApproved: options.includeAutoApproved, keep: options.readable },
          after,
          options.limit + 1,
          (row) => rows.push(row)
        ).pipe(
          Effect.map(() => Pagination.pageFromRows(rows, options.limit, keysetOf)),
          Effect.orDie
        )
      }),
      counts: Traced.fn("ChangeRepoSql.counts")((organizationId, filter) => {
        const counts: { -readonly [K in keyof StatusCounts]: number } = { ...emptyCounts }
        return scan(
          organizationId,
          { statuses: [], includeAutoApproved: filter.includeAutoApproved, keep: filter.readable },
          Option.none(),
          Number.POSITIVE_INFINITY,
          (row) => counts[row.status]++
        ).pipe(Effect.as(counts as StatusCounts), Effect.orDie)
      }),
      addRevision: Traced.fn("ChangeRepoSql.addRevision")((revision) =>
        insertRevision(revision).pipe(
          Effect.catchIf(
            isUniqueViolation(revisionKey),
            () =>
              new Conflict({ message: `revision ${revision.revision} of change ${revision.change_id} already exists` })
          ),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      revisions: Traced.fn("ChangeRepoSql.revisions")((organizationId, changeId) =>
        Effect.orDie(findRevisions({ organization_id: organizationId, change_id: changeId }))
      ),
      addApproval: Traced.fn("ChangeRepoSql.addApproval")((approval) =>
        Effect.map(Effect.orDie(insertApproval(approval)), (rows) => ({ alreadyApproved: rows.length === 0 }))
      ),
      approvals: Traced.fn("ChangeRepoSql.approvals")((organizationId, changeId) =>
        Effect.orDie(findApprovals({ organization_id: organizationId, change_id: changeId }))
      )
    })
  }
)

/**
 * `ChangeRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ChangeRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(ChangeRepo, make)

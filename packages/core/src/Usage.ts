/**
 * Model usage, summed from the audit log's `model.usage` entries (one per run that called its
 * model: its tokens and each generation's): `GET /v2/usage`, by member, by API key or by model,
 * over a period.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { ApiKeyId, MemberId } from "./Ids.js"

/**
 * What usage is summed by.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GroupBy = Schema.Literal("member", "api_key", "model")
export type GroupBy = typeof GroupBy.Type

/**
 * Query of `GET /v2/usage`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageParams = Schema.Struct({
  /** From this time (inclusive); 30 days before `to` when absent. */
  from: Schema.optional(Schema.DateTimeUtc),
  /** Until this time (exclusive); now when absent. */
  to: Schema.optional(Schema.DateTimeUtc),
  group_by: Schema.optionalWith(GroupBy, { default: () => "member" as const })
}).annotations({ identifier: "UsageParams" })
export type UsageParams = typeof UsageParams.Type

/**
 * Sums of one member, API key and model, as the store adds them up.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sums {
  readonly memberId?: MemberId | undefined
  readonly apiKeyId?: ApiKeyId | undefined
  readonly model: string
  readonly answers: number
  readonly calls: number
  readonly input: number
  readonly output: number
}

/**
 * One row of usage.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageRow = Schema.Struct({
  /** The member (`group_by=member`); absent for runs no member started. */
  member_id: Schema.optional(MemberId),
  /** The API key (`group_by=api_key`); absent for the runs of sessions. */
  api_key_id: Schema.optional(ApiKeyId),
  /** The catalogue model (`group_by=model`). */
  model: Schema.optional(Schema.String),
  /** Runs that called a model. */
  answers: Schema.NonNegativeInt,
  /** Model generations. */
  calls: Schema.NonNegativeInt,
  input_tokens: Schema.NonNegativeInt,
  output_tokens: Schema.NonNegativeInt
}).annotations({ identifier: "UsageRow" })
export type UsageRow = typeof UsageRow.Type

/**
 * Response of `GET /v2/usage`: the rows, most tokens first, and their totals.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageResponse = Schema.Struct({
  from: Schema.DateTimeUtc,
  to: Schema.DateTimeUtc,
  group_by: GroupBy,
  rows: Schema.Array(UsageRow),
  totals: UsageRow.pipe(Schema.omit("member_id", "api_key_id", "model"))
}).annotations({ identifier: "Usage" })
export type UsageResponse = typeof UsageResponse.Type

/**
 * The default period: the 30 days before `to`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSpan = { days: 30 } as const

/**
 * The usage of a period, grouped.
 *
 * @since 0.1.0
 * @category utils
 */
export const group = (
  sums: ReadonlyArray<Sums>,
  by: GroupBy,
  period: { readonly from: DateTime.Utc; readonly to: DateTime.Utc }
): UsageResponse => {
  const rows = new Map<string, { -readonly [K in keyof UsageRow]: UsageRow[K] }>()
  const totals = { answers: 0, calls: 0, input_tokens: 0, output_tokens: 0 }
  for (const s of sums) {
    const key = by === "member" ? s.memberId : by === "api_key" ? s.apiKeyId : s.model
    const row = rows.get(key ?? "") ?? {
      ...(key === undefined ? {} : by === "member"
        ? { member_id: s.memberId }
        : by === "api_key"
        ? { api_key_id: s.apiKeyId }
        : { model: s.model }),
      answers: 0,
      calls: 0,
      input_tokens: 0,
      output_tokens: 0
    }
    row.answers += s.answers
    row.calls += s.calls
    row.input_tokens += s.input
    row.output_tokens += s.output
    rows.set(key ?? "", row)
    totals.answers += s.answers
    totals.calls += s.calls
    totals.input_tokens += s.input
    totals.output_tokens += s.output
  }
  return {
    from: period.from,
    to: period.to,
    group_by: by,
    rows: [...rows.values()].sort((a, b) =>
      (b.input_tokens + b.output_tokens) - (a.input_tokens + a.output_tokens) || b.answers - a.answers
    ),
    totals
  }
}

/**
 * The period a query asks for.
 *
 * @since 0.1.0
 * @category utils
 */
export const periodOf = (params: UsageParams, now: DateTime.Utc) => {
  const to = params.to ?? now
  return { from: params.from ?? DateTime.subtract(to, defaultSpan), to }
}

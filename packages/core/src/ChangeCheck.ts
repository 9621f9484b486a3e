/**
 * A check on a library change, as a change carries it: what was checked, how it came out, what it
 * found. The checks are run by `ChangeChecks`. A change with a failing check does not merge, and no
 * auto-approve rule approves it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ConnectorId } from "./Ids.js"

/**
 * How a check came out: `skipped` when it could not run (it says why), which blocks nothing.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CheckStatus = Schema.Literal("passed", "failed", "skipped")
export type CheckStatus = typeof CheckStatus.Type

/**
 * One check of a change, with what it found.
 *
 * @since 0.1.0
 * @category models
 */
export class Check extends Schema.Class<Check>("@sightline/core/ChangeCheck/Check")({
  /** What was checked: `semantic/demo.yaml: format`, `semantic/demo.yaml: connector Demo`. */
  name: Schema.String,
  status: CheckStatus,
  /** One line per problem (`semantic/demo.yaml:12: ...`), or why it was skipped. */
  messages: Schema.Array(Schema.String),
  /** The connector it ran against, for a check of a model on one. */
  connector_id: Schema.optional(ConnectorId)
}) {}

/**
 * The check as a reader who may not use its connector sees it: how it came out (it may keep the
 * change from merging), without the connector's name or what its database said.
 *
 * @since 0.1.0
 * @category utils
 */
export const withoutConnector = (check: Check): Check => {
  const at = check.name.indexOf(": connector ")
  return new Check({
    name: `${at < 0 ? check.name : check.name.slice(0, at)}: a connector you may not use`,
    status: check.status,
    messages: []
  })
}

/**
 * Whether any check failed.
 *
 * @since 0.1.0
 * @category utils
 */
export const failing = (checks: ReadonlyArray<Check>): boolean => checks.some((c) => c.status === "failed")

/**
 * Request bodies refuse fields they do not declare, as the OpenAPI document says
 * (`additionalProperties: false`): a misspelt field (`inherit_all_roles` for `inheritAllRoles`) is a
 * 400 naming it, not a silently ignored setting.
 *
 * @internal
 */
import type * as Schema from "effect/Schema"

/** The schema, refusing excess properties at every depth. */
export const strict = <S extends Schema.Schema.All>(schema: S): S =>
  schema.annotations({ parseOptions: { onExcessProperty: "error" } }) as S

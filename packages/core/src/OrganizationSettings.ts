/**
 * An organization's settings: switches its admins set for the whole organization. The store keeps
 * only what an admin changed; every other setting reads as its default, so a setting added later
 * reaches every organization without a data migration.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as EndUser from "./EndUser.js"

/**
 * The settings, as read: every one has a value.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OrganizationSettings = Schema.Struct({
  mcp_run_sql: Schema.Boolean.annotations({
    description: "Whether agents connected over MCP may run SQL of their own (the run_sql tool). Asking, " +
      "semantic queries and verified queries stay available either way. On by default."
  }),
  embed_origins: Schema.Array(EndUser.Origin).pipe(Schema.maxItems(100)).annotations({
    description: "The browser origins end users' sessions (`POST /v2/embed/sessions`) may be used from, such as " +
      "https://app.example.com. A session names some of these; empty (the default) allows no embedding."
  })
}).annotations({ identifier: "OrganizationSettings" })
export type OrganizationSettings = typeof OrganizationSettings.Type

/**
 * The settings of an organization whose admins changed none.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: OrganizationSettings = { mcp_run_sql: true, embed_origins: [] }

/**
 * A change of settings: only the settings given change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdateOrganizationSettings = Schema.partialWith(OrganizationSettings, { exact: true }).annotations({
  identifier: "UpdateOrganizationSettings"
})
export type UpdateOrganizationSettings = typeof UpdateOrganizationSettings.Type

const decodeStored = Schema.decodeUnknownOption(UpdateOrganizationSettings)

/**
 * The settings an organization has, from what its store keeps (the changed settings). A stored
 * value that no longer decodes reads as the defaults rather than failing every read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStored = (stored: unknown): OrganizationSettings => ({
  ...defaults,
  ...Option.getOrElse(decodeStored(stored), () => ({}))
})

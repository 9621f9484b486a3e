/**
 * An app: code and files built in a chat over some data sources, served read-only by `GetApp` on
 * the Connect RPC surface (camelCase there; stored snake_case like every record).
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { AppId, ChatId, ConnectorId, MemberId, OrganizationId } from "./Ids.js"
import { filePathIssue } from "./Sandbox.js"

/**
 * The longest app name accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME_MAX_LENGTH = 200

/**
 * An app's files: relative path to content. Paths follow the sandbox file rule (no traversal, no
 * dotfiles, no OWNERS), checked on the whole map because a refined record key would silently drop
 * a bad path instead of rejecting it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Files = Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
  Schema.filter((files) => {
    for (const path of Object.keys(files)) {
      const issue = filePathIssue(path)
      if (issue !== undefined) return `invalid file path ${JSON.stringify(path)}: ${issue}`
    }
    return true
  }, {
    identifier: "AppFiles",
    description: "relative file path to content; paths follow the sandbox file path rule"
  })
)
export type Files = typeof Files.Type

/**
 * An app as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class App extends Schema.Class<App>("@sightline/core/App")({
  id: AppId,
  organization_id: OrganizationId,
  owner_id: MemberId,
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(NAME_MAX_LENGTH)),
  description: Schema.String,
  code: Schema.String,
  files: Files,
  /** The connectors the app reads. */
  data_sources: Schema.Array(ConnectorId),
  /** The chat the app was built in. */
  chat_id: Schema.optional(ChatId),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * Body of creating an app (camelCase, as the app surface is).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRequest = Schema.Struct({
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(NAME_MAX_LENGTH)),
  description: Schema.optional(Schema.String),
  code: Schema.String,
  files: Schema.optional(Files),
  dataSources: Schema.optional(Schema.Array(ConnectorId)),
  chatId: Schema.optional(ChatId)
})
export type CreateRequest = typeof CreateRequest.Type

/**
 * A new app from its create body; the caller owns it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: AppId
  readonly organizationId: OrganizationId
  readonly ownerId: MemberId
  readonly request: CreateRequest
  readonly at: DateTime.Utc
}): App => {
  const { request } = options
  return new App({
    id: options.id,
    organization_id: options.organizationId,
    owner_id: options.ownerId,
    name: request.name,
    description: request.description ?? "",
    code: request.code,
    files: request.files ?? {},
    data_sources: request.dataSources ?? [],
    ...(request.chatId === undefined ? {} : { chat_id: request.chatId }),
    created_at: options.at,
    updated_at: options.at
  })
}

/**
 * An app as `GetApp` serves it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct({
  id: AppId,
  name: Schema.String,
  description: Schema.String,
  code: Schema.String,
  files: Schema.Record({ key: Schema.String, value: Schema.String }),
  dataSources: Schema.Array(ConnectorId),
  chatId: Schema.optional(ChatId),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}).annotations({ identifier: "App" })
export type View = typeof View.Type

/**
 * The `GetApp` view of a stored app.
 *
 * @since 0.1.0
 * @category utils
 */
export const toView = (app: App): View => ({
  id: app.id,
  name: app.name,
  description: app.description,
  code: app.code,
  files: app.files,
  dataSources: app.data_sources,
  ...(app.chat_id === undefined ? {} : { chatId: app.chat_id }),
  createdAt: app.created_at,
  updatedAt: app.updated_at
})

/**
 * Body of `GetApp`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetAppRequest = Schema.Struct({ appId: AppId })
export type GetAppRequest = typeof GetAppRequest.Type

/**
 * Response of `GetApp`: the app and whether the caller may change it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetAppResponse = Schema.Struct({
  app: View,
  hasWritePermission: Schema.Boolean
})
export type GetAppResponse = typeof GetAppResponse.Type

/**
 * Response of listing apps: newest first, without pages.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({ apps: Schema.Array(View) })
export type ListResponse = typeof ListResponse.Type

/**
 * Response of deleting an app.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteResponse = Schema.Struct({ id: AppId, success: Schema.Boolean })
export type DeleteResponse = typeof DeleteResponse.Type

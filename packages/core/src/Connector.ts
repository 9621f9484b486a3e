/**
 * Data connectors: the configuration of each connector type, the types registry served by
 * GET /v2/connectors/types, access grants, and the wire shapes of the Connectors endpoints.
 *
 * Confidential settings (passwords) are `Redacted` once decoded, so they never show up in logs or
 * traces, and `redact` drops them from any shape that leaves core. The registry is derived from the
 * settings schemas: a field is confidential exactly when its type is `Redacted`, so the schema and
 * the registry cannot disagree.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import type * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { InvalidRequest } from "./Errors.js"
import { ConnectorId, MemberId, OrganizationId, RoleId } from "./Ids.js"

// ---------------------------------------------------------------------------------------------
// Configuration per type
// ---------------------------------------------------------------------------------------------

/**
 * The connector types, upper-case as the hosted service names them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorType = Schema.Literal("POSTGRES", "MYSQL", "DEMO", "FILES")
export type ConnectorType = typeof ConnectorType.Type

/**
 * A connector's display name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorName = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))

/** A confidential setting: write-only, `Redacted` in memory. */
const Secret = Schema.Redacted(Schema.String)

/**
 * libpq's `sslmode` values.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SslMode = Schema.Literal("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
export type SslMode = typeof SslMode.Type

/**
 * The settings of a PostgreSQL connector (config key `postgres`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const PostgresSettings = Schema.Struct({
  host: Schema.NonEmptyTrimmedString,
  port: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 65535)), { default: () => 5432 }),
  user: Schema.NonEmptyTrimmedString,
  /** May be empty (trust or peer authentication). */
  password: Secret,
  database: Schema.NonEmptyTrimmedString,
  /** The schemas the agent may see; all of them when omitted. */
  schemas: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString)),
  /** libpq's default, so a connector behaves as `psql` would with the same settings. */
  ssl_mode: Schema.optionalWith(SslMode, { default: () => "prefer" as const }),
  /**
   * The key Sightline signs the client attributes with (`svc.client_attributes_signature`, an
   * HMAC-SHA256 of `svc.client_attributes_json`), which the database's policies verify with
   * `sightline.client_attributes()`: set, with `include_db_session_metadata`, the database enforces
   * row-level security that SQL cannot forge. Absent or empty: not signed.
   */
  client_attributes_secret: Schema.optional(Secret)
})
export type PostgresSettings = typeof PostgresSettings.Type

/**
 * The settings of a PostgreSQL connector on update: an empty or missing password keeps the stored one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PostgresSettingsUpdate = Schema.Struct({
  ...PostgresSettings.fields,
  password: Schema.optional(Secret),
  client_attributes_secret: Schema.optional(Secret)
})
export type PostgresSettingsUpdate = typeof PostgresSettingsUpdate.Type

/**
 * The settings of a MySQL or MariaDB connector (config key `mysql`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MysqlSettings = Schema.Struct({
  host: Schema.NonEmptyTrimmedString,
  port: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 65535)), { default: () => 3306 }),
  user: Schema.NonEmptyTrimmedString,
  /** May be empty (a server that trusts the user). */
  password: Secret,
  database: Schema.NonEmptyTrimmedString,
  /** `disable`, `allow` and `prefer` connect without TLS; `require` encrypts; `verify-*` check the certificate. */
  ssl_mode: Schema.optionalWith(SslMode, { default: () => "prefer" as const })
})
export type MysqlSettings = typeof MysqlSettings.Type

/**
 * The settings of a MySQL connector on update: an empty or missing password keeps the stored one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MysqlSettingsUpdate = Schema.Struct({
  ...MysqlSettings.fields,
  password: Schema.optional(Secret)
})
export type MysqlSettingsUpdate = typeof MysqlSettingsUpdate.Type

/**
 * The name of the demo dataset a fresh install ships (the sandbox embeds it).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultDemoDataset = "retail"

/**
 * The settings of the embedded demo connector (config key `demo`): a bundled dataset, no server.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DemoSettings = Schema.Struct({
  dataset: Schema.optionalWith(
    Schema.String.pipe(
      Schema.pattern(/^[a-z][a-z0-9_]{0,63}$/, { message: () => "a dataset name is lower snake_case" })
    ),
    { default: () => defaultDemoDataset }
  )
})
export type DemoSettings = typeof DemoSettings.Type

/**
 * The formats a FILES connector reads.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileFormat = Schema.Literal("csv", "tsv", "xlsx", "parquet", "json", "ndjson")
export type FileFormat = typeof FileFormat.Type

/**
 * The format of a file by its name's extension, or `undefined` for a file a FILES connector does
 * not read: the one rule of which files become tables.
 *
 * @since 0.1.0
 * @category utils
 */
export const fileFormatOf = (fileName: string): FileFormat | undefined => {
  switch (/\.([A-Za-z0-9]+)$/.exec(fileName)?.[1]?.toLowerCase()) {
    case "csv":
      return "csv"
    case "tsv":
    case "tab":
      return "tsv"
    case "xlsx":
      return "xlsx"
    case "parquet":
      return "parquet"
    case "json":
      return "json"
    case "ndjson":
    case "jsonl":
      return "ndjson"
    default:
      return undefined
  }
}

/**
 * The rows of a FILES connector's table shown beside its columns.
 *
 * @since 0.1.0
 * @category constants
 */
export const FILE_PREVIEW_ROWS = 5

/**
 * A table of a FILES connector: one uploaded file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileTable = Schema.Struct({
  table: Schema.String,
  file_name: Schema.String,
  /** The sheet of a workbook it was loaded from. */
  sheet: Schema.optional(Schema.String),
  format: FileFormat,
  size_bytes: Schema.Int.pipe(Schema.nonNegative()),
  rows: Schema.Int.pipe(Schema.nonNegative()),
  columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })),
  /** Its first rows (at most `FILE_PREVIEW_ROWS`), for whoever looks at what an upload made. */
  preview: Schema.optional(Schema.Array(Schema.Array(Schema.Unknown)))
})
export type FileTable = typeof FileTable.Type

/**
 * The settings of a FILES connector, which the server alone writes (from the files uploaded): its
 * tables, and where its database is kept (`storage_prefix`, in the asset store).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilesSettings = Schema.Struct({
  tables: Schema.Array(FileTable),
  storage_prefix: Schema.String,
  /** The size of the database the files were loaded into. */
  size_bytes: Schema.Int.pipe(Schema.nonNegative())
})
export type FilesSettings = typeof FilesSettings.Type

/**
 * The files of a FILES connector, as `GET /v2/connectors/{id}/files` serves them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilesResponse = Schema.Struct({
  connector_id: ConnectorId,
  name: Schema.String,
  tables: Schema.Array(FileTable),
  size_bytes: Schema.Int
}).annotations({ identifier: "ConnectorFiles" })
export type FilesResponse = typeof FilesResponse.Type

/**
 * The configuration of a PostgreSQL connector.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PostgresConfig = Schema.Struct({
  connector_type: Schema.Literal("POSTGRES"),
  name: ConnectorName,
  postgres: PostgresSettings
})

/**
 * The configuration of a MySQL or MariaDB connector.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MysqlConfig = Schema.Struct({
  connector_type: Schema.Literal("MYSQL"),
  name: ConnectorName,
  mysql: MysqlSettings
})

/**
 * The configuration of a demo connector.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DemoConfig = Schema.Struct({
  connector_type: Schema.Literal("DEMO"),
  name: ConnectorName,
  demo: DemoSettings
})

/**
 * The configuration of a FILES connector (uploaded files, each a table, on DuckDB).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilesConfig = Schema.Struct({
  connector_type: Schema.Literal("FILES"),
  name: ConnectorName,
  files: FilesSettings
})

/**
 * A connector configuration: `{connector_type, name, <config key>: {...}}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorConfig = Schema.Union(PostgresConfig, MysqlConfig, DemoConfig, FilesConfig)
export type ConnectorConfig = typeof ConnectorConfig.Type

/**
 * A configuration as sent on update (and on test): confidential settings may be empty or missing.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorConfigUpdate = Schema.Union(
  Schema.Struct({ ...PostgresConfig.fields, postgres: PostgresSettingsUpdate }),
  Schema.Struct({ ...MysqlConfig.fields, mysql: MysqlSettingsUpdate }),
  DemoConfig,
  // Only the name of a FILES connector changes this way; its files keep what was uploaded.
  Schema.Struct({ ...FilesConfig.fields, files: Schema.optional(FilesSettings) })
)
export type ConnectorConfigUpdate = typeof ConnectorConfigUpdate.Type

interface TypeSpec {
  readonly connector_type: ConnectorType
  readonly config_key: string
  readonly settings: Schema.Schema.AnyNoContext
  readonly update: Schema.Schema.AnyNoContext
}

const specs: { readonly [T in ConnectorType]: TypeSpec } = {
  POSTGRES: {
    connector_type: "POSTGRES",
    config_key: "postgres",
    settings: PostgresSettings,
    update: PostgresSettingsUpdate
  },
  MYSQL: { connector_type: "MYSQL", config_key: "mysql", settings: MysqlSettings, update: MysqlSettingsUpdate },
  DEMO: { connector_type: "DEMO", config_key: "demo", settings: DemoSettings, update: DemoSettings },
  FILES: { connector_type: "FILES", config_key: "files", settings: FilesSettings, update: FilesSettings }
}

/**
 * The config key of a connector type (`postgres` for `POSTGRES`).
 *
 * @since 0.1.0
 * @category utils
 */
export const configKey = (type: ConnectorType): string => specs[type].config_key

// ---------------------------------------------------------------------------------------------
// Types registry
// ---------------------------------------------------------------------------------------------

/**
 * The value type of a setting as the registry names it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FieldType = Schema.Literal("string", "integer", "number", "boolean", "string[]", "enum")
export type FieldType = typeof FieldType.Type

/**
 * A setting of a connector type. `values` lists the choices of an `enum`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FieldDescription = Schema.Struct({
  name: Schema.String,
  type: FieldType,
  confidential: Schema.Boolean,
  /** True when the field may be left empty on update to keep the stored value. */
  optional_on_update: Schema.Boolean,
  values: Schema.optional(Schema.Array(Schema.String))
})
export type FieldDescription = typeof FieldDescription.Type

/**
 * A connector type as GET /v2/connectors/types describes it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorTypeDescription = Schema.Struct({
  connector_type: ConnectorType,
  config_key: Schema.String,
  fields: Schema.Array(FieldDescription)
})
export type ConnectorTypeDescription = typeof ConnectorTypeDescription.Type

/**
 * The response of GET /v2/connectors/types.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorTypesResponse = Schema.Struct({ types: Schema.Array(ConnectorTypeDescription) })
export type ConnectorTypesResponse = typeof ConnectorTypesResponse.Type

const withoutUndefined = (ast: AST.AST): AST.AST =>
  AST.isUnion(ast) ? AST.Union.make(ast.types.filter((t) => !AST.isUndefinedKeyword(t))) : ast

const isRedactedAst = (ast: AST.AST): boolean =>
  AST.isDeclaration(ast) &&
  Option.exists(AST.getTypeConstructorAnnotation(ast), (annotation) => annotation._tag === "effect/Redacted")

const isIntRefinement = (ast: AST.AST): boolean => Option.contains(AST.getSchemaIdAnnotation(ast), Schema.IntSchemaId)

const describeType = (ast: AST.AST): Pick<FieldDescription, "type" | "values"> => {
  switch (ast._tag) {
    case "Declaration":
      return isRedactedAst(ast) && ast.typeParameters.length === 1
        ? describeType(ast.typeParameters[0]!)
        : { type: "string" }
    case "Refinement":
      return isIntRefinement(ast) ? { type: "integer" } : describeType(ast.from)
    case "StringKeyword":
      return { type: "string" }
    case "NumberKeyword":
      return { type: "number" }
    case "BooleanKeyword":
      return { type: "boolean" }
    case "TupleType":
      // The only lists among connector settings are lists of names.
      return { type: "string[]" }
    case "Union":
      return ast.types.every(AST.isLiteral)
        ? { type: "enum", values: ast.types.map((t) => String((t as AST.Literal).literal)) }
        : { type: "string" }
    default:
      return { type: "string" }
  }
}

const describeFields = (spec: TypeSpec): ReadonlyArray<FieldDescription> => {
  const typeSide = AST.getPropertySignatures(AST.typeAST(spec.settings.ast))
  const optionalOnCreate = new Set(
    AST.getPropertySignatures(AST.encodedAST(spec.settings.ast)).filter((p) => p.isOptional).map((p) => p.name)
  )
  const optionalOnUpdate = new Set(
    AST.getPropertySignatures(AST.encodedAST(spec.update.ast)).filter((p) => p.isOptional).map((p) => p.name)
  )
  return typeSide.map((p) => {
    const ast = withoutUndefined(p.type)
    return {
      name: String(p.name),
      ...describeType(ast),
      confidential: isRedactedAst(ast),
      optional_on_update: optionalOnUpdate.has(p.name) && !optionalOnCreate.has(p.name)
    }
  })
}

/**
 * Every connector type with its settings, derived from the settings schemas.
 *
 * @since 0.1.0
 * @category constants
 */
export const types: ReadonlyArray<ConnectorTypeDescription> = ConnectorType.literals
  // A FILES connector is made by uploading files, not by filling in settings.
  .filter((type) => type !== "FILES")
  .map((type) => ({
    connector_type: type,
    config_key: specs[type].config_key,
    fields: describeFields(specs[type])
  }))

/**
 * The names of the confidential settings of a connector type.
 *
 * @since 0.1.0
 * @category utils
 */
export const confidentialFields = (type: ConnectorType): ReadonlyArray<string> =>
  Arr.findFirst(types, (t) => t.connector_type === type).pipe(
    Option.match({
      onNone: () => [],
      onSome: (t) => t.fields.filter((f) => f.confidential).map((f) => f.name)
    })
  )

// ---------------------------------------------------------------------------------------------
// Merging and redaction
// ---------------------------------------------------------------------------------------------

type Settings = Readonly<Record<string, unknown>>

const settingsOf = (config: ConnectorConfig | ConnectorConfigUpdate): Settings =>
  (config as unknown as Record<string, Settings>)[configKey(config.connector_type)]!

const isBlank = (value: unknown): boolean =>
  value === undefined || (Redacted.isRedacted(value) && Redacted.value(value) === "")

const validateConfig = (config: unknown): Either.Either<ConnectorConfig, InvalidRequest> =>
  Schema.validateEither(ConnectorConfig)(config).pipe(
    Either.mapLeft((error) => new InvalidRequest({ message: ParseResult.TreeFormatter.formatErrorSync(error) }))
  )

const fillConfidential = (
  update: ConnectorConfigUpdate,
  fill: (name: string) => unknown
): Either.Either<ConnectorConfig, InvalidRequest> => {
  const settings: Record<string, unknown> = { ...settingsOf(update) }
  for (const name of confidentialFields(update.connector_type)) {
    if (isBlank(settings[name])) settings[name] = fill(name)
  }
  return validateConfig({ ...update, [configKey(update.connector_type)]: settings })
}

/**
 * Applies an update to a stored configuration: every setting is replaced, except confidential ones
 * sent empty or not at all, which keep the stored value (clients never see them, so they cannot
 * resend them). The type of a connector cannot change.
 *
 * @since 0.1.0
 * @category utils
 */
export const mergeConfig = (
  stored: ConnectorConfig,
  update: ConnectorConfigUpdate
): Either.Either<ConnectorConfig, InvalidRequest> =>
  stored.connector_type !== update.connector_type
    ? Either.left(
      new InvalidRequest({
        message:
          `connector_type cannot change: this connector is ${stored.connector_type}, not ${update.connector_type}`
      })
    )
    : stored.connector_type === "FILES"
    ? validateConfig({ ...stored, name: update.name })
    : fillConfidential(update, (name) => settingsOf(stored)[name])

/**
 * A configuration from an update-shaped one with nothing stored: missing confidential settings are empty.
 *
 * @since 0.1.0
 * @category utils
 */
export const completeConfig = (update: ConnectorConfigUpdate): Either.Either<ConnectorConfig, InvalidRequest> =>
  fillConfidential(update, () => Redacted.make(""))

/**
 * A configuration without its confidential settings: the only shape of a configuration that leaves core.
 *
 * @since 0.1.0
 * @category utils
 */
export const redact = (config: ConnectorConfig): ConnectorConfigUpdate => {
  const confidential = new Set(confidentialFields(config.connector_type))
  const settings = Object.fromEntries(Object.entries(settingsOf(config)).filter(([name]) => !confidential.has(name)))
  return { ...config, [configKey(config.connector_type)]: settings } as ConnectorConfigUpdate
}

// ---------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------

/**
 * The level of access a grant gives.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AccessType = Schema.Literal("owner", "editor", "viewer")
export type AccessType = typeof AccessType.Type

const grantFields = {
  member_id: Schema.optional(MemberId),
  role_id: Schema.optional(RoleId),
  access_type: AccessType,
  expires_at: Schema.optional(Schema.DateTimeUtc)
}

const exactlyOnePrincipal = <
  A extends { readonly member_id?: MemberId | undefined; readonly role_id?: RoleId | undefined }
>(
  grant: A
) =>
  (grant.member_id === undefined) !== (grant.role_id === undefined) ||
  "a grant names exactly one of member_id and role_id"

/**
 * A grant of access to a connector, to a member or to a role.
 *
 * @since 0.1.0
 * @category models
 */
export class AccessGrant extends Schema.Class<AccessGrant>("@sightline/core/AccessGrant")(
  Schema.Struct({ ...grantFields, granted_by: MemberId }).pipe(Schema.filter(exactlyOnePrincipal))
) {}

/**
 * A grant as a client sends it; `granted_by` is always the caller.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AccessGrantInput = Schema.Struct(grantFields).pipe(Schema.filter(exactlyOnePrincipal))
export type AccessGrantInput = typeof AccessGrantInput.Type

/**
 * Who may use a connector: everybody in the organization (`is_public`) or the grantees.
 *
 * @since 0.1.0
 * @category models
 */
export class ConnectorAccess extends Schema.Class<ConnectorAccess>("@sightline/core/ConnectorAccess")({
  is_public: Schema.Boolean,
  grants: Schema.Array(AccessGrant)
}) {}

const principalKey = (grant: { readonly member_id?: MemberId | undefined; readonly role_id?: RoleId | undefined }) =>
  grant.member_id !== undefined ? `member:${grant.member_id}` : `role:${grant.role_id}`

/**
 * The body of PUT /v2/connectors/{id}/access (and `access` of create); a principal appears once.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SetConnectorAccess = Schema.Struct({
  is_public: Schema.Boolean,
  grants: Schema.Array(AccessGrantInput).pipe(
    Schema.filter((grants) => {
      const duplicate = grants.find((g, i) => grants.findIndex((o) => principalKey(o) === principalKey(g)) !== i)
      return duplicate === undefined || `${principalKey(duplicate)} is granted twice`
    })
  )
})
export type SetConnectorAccess = typeof SetConnectorAccess.Type

const grantOf = (input: AccessGrantInput, grantedBy: MemberId): AccessGrant =>
  new AccessGrant({ ...input, granted_by: grantedBy })

const ownerGrant = (owner: MemberId): AccessGrant =>
  new AccessGrant({ member_id: owner, access_type: "owner", granted_by: owner })

/**
 * The access of a new connector: its creator is its owner; the requested grants are added and a
 * connector is private unless asked otherwise (connectors reach data, so sharing is explicit).
 *
 * @since 0.1.0
 * @category utils
 */
export const initialAccess = (owner: MemberId, input?: SetConnectorAccess): ConnectorAccess =>
  new ConnectorAccess({
    is_public: input?.is_public ?? false,
    grants: [
      ownerGrant(owner),
      ...(input?.grants ?? []).filter((g) => g.member_id !== owner).map((g) => grantOf(g, owner))
    ]
  })

/**
 * Replaces a connector's access with the requested one. Grants that did not change keep who granted
 * them; new or changed ones are granted by the caller; the caller's own owner grant is always kept,
 * so nobody can lock themselves out of a connector they own.
 *
 * @since 0.1.0
 * @category utils
 */
export const replaceAccess = (
  current: ConnectorAccess,
  input: SetConnectorAccess,
  caller: MemberId
): ConnectorAccess => {
  const callerOwner = current.grants.find((g) => g.member_id === caller && g.access_type === "owner")
  const requested = input.grants
    .filter((g) => callerOwner === undefined || g.member_id !== caller)
    .map((g) => {
      const unchanged = current.grants.find((c) =>
        principalKey(c) === principalKey(g) && c.access_type === g.access_type &&
        c.expires_at?.epochMillis === g.expires_at?.epochMillis
      )
      return unchanged ?? grantOf(g, caller)
    })
  return new ConnectorAccess({
    is_public: input.is_public,
    grants: callerOwner === undefined ? requested : [callerOwner, ...requested]
  })
}

// ---------------------------------------------------------------------------------------------
// Stored record and wire shapes
// ---------------------------------------------------------------------------------------------

/**
 * A connector as stored. Its access is stored beside it (see `ConnectorRepo.getAccess`).
 *
 * @since 0.1.0
 * @category models
 */
export class ConnectorRecord extends Schema.Class<ConnectorRecord>("@sightline/core/ConnectorRecord")({
  id: ConnectorId,
  organization_id: OrganizationId,
  owner_id: MemberId,
  config: ConnectorConfig,
  /** Off by default: SQL the agent writes runs read-only unless an admin allows writes. */
  allow_sql_write_operations: Schema.Boolean,
  include_db_session_metadata: Schema.Boolean,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * Does the database itself enforce a caller's client attributes on this connector? Only a POSTGRES
 * connector that sets them for the transaction (`include_db_session_metadata`) signed with its
 * `client_attributes_secret`, whose policies verify the signature: SQL that anyone but the server
 * writes can change the setting (`set_config` in a CTE), never its signature.
 *
 * @since 0.1.0
 * @category utils
 */
export const enforcesClientAttributes = (record: ConnectorRecord): boolean =>
  record.include_db_session_metadata && clientAttributesSecret(record.config) !== ""

/**
 * The key a connector signs client attributes with; `""` when it signs none (any type but POSTGRES).
 *
 * @since 0.1.0
 * @category utils
 */
export const clientAttributesSecret = (config: ConnectorConfig): string =>
  config.connector_type === "POSTGRES" && config.postgres.client_attributes_secret !== undefined
    ? Redacted.value(config.postgres.client_attributes_secret)
    : ""

/**
 * A connector as listed: never its configuration.
 *
 * @since 0.1.0
 * @category models
 */
export class Connector extends Schema.Class<Connector>("@sightline/core/Connector")({
  id: ConnectorId,
  name: Schema.String,
  type: ConnectorType
}) {}

/**
 * The wire shape of a stored connector.
 *
 * @since 0.1.0
 * @category utils
 */
export const toConnector = (record: ConnectorRecord): Connector =>
  new Connector({ id: record.id, name: record.config.name, type: record.config.connector_type }, true)

/**
 * The body of POST /v2/connectors.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateConnectorRequest = Schema.Struct({
  config: ConnectorConfig,
  access: Schema.optional(SetConnectorAccess)
})
export type CreateConnectorRequest = typeof CreateConnectorRequest.Type

/**
 * The body of PATCH /v2/connectors/{id}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdateConnectorRequest = Schema.Struct({
  config: ConnectorConfigUpdate,
  allow_sql_write_operations: Schema.optional(Schema.Boolean),
  include_db_session_metadata: Schema.optional(Schema.Boolean)
})
export type UpdateConnectorRequest = typeof UpdateConnectorRequest.Type

/**
 * The body of POST /v2/connectors/test: with `connector_id`, empty confidential settings use the stored ones.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TestConnectorRequest = Schema.Struct({
  config: ConnectorConfigUpdate,
  connector_id: Schema.optional(ConnectorId)
})
export type TestConnectorRequest = typeof TestConnectorRequest.Type

/**
 * The response of POST /v2/connectors/test (a failed connection is still a success response).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TestConnectorResponse = Schema.Struct({
  success: Schema.Boolean,
  error: Schema.optional(Schema.String)
})
export type TestConnectorResponse = typeof TestConnectorResponse.Type

/**
 * The response of GET /v2/connectors.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListConnectorsResponse = Schema.Array(Connector)
export type ListConnectorsResponse = typeof ListConnectorsResponse.Type

/**
 * The response of DELETE /v2/connectors/{id}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteConnectorResponse = Schema.Struct({ id: ConnectorId, success: Schema.Boolean })
export type DeleteConnectorResponse = typeof DeleteConnectorResponse.Type

/**
 * A connector about to be created: everything but the id, which the repository assigns.
 *
 * @since 0.1.0
 * @category models
 */
export type NewConnector = Omit<ConnectorRecord, "id">

/**
 * A new connector from a create request (write operations off, session metadata off).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly organizationId: OrganizationId
  readonly ownerId: MemberId
  readonly config: ConnectorConfig
  readonly at: DateTime.Utc
}): NewConnector => ({
  organization_id: options.organizationId,
  owner_id: options.ownerId,
  config: options.config,
  allow_sql_write_operations: false,
  include_db_session_metadata: false,
  created_at: options.at,
  updated_at: options.at
})

/**
 * Applies PATCH /v2/connectors/{id}: merges the configuration and sets the flags that were sent.
 *
 * @since 0.1.0
 * @category utils
 */
export const applyUpdate = (
  record: ConnectorRecord,
  request: UpdateConnectorRequest,
  at: DateTime.Utc
): Either.Either<ConnectorRecord, InvalidRequest> =>
  Either.map(mergeConfig(record.config, request.config), (config) =>
    new ConnectorRecord({
      ...record,
      config,
      allow_sql_write_operations: request.allow_sql_write_operations ?? record.allow_sql_write_operations,
      include_db_session_metadata: request.include_db_session_metadata ?? record.include_db_session_metadata,
      updated_at: at
    }))

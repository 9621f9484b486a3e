/**
 * The connectors use cases (`/v2/connectors`): listing what the caller can use, the types registry,
 * creating, testing, updating and deleting connectors, managing who may use them, and
 * `resolveForUse`, which hands the agent and the sandbox the configurations a caller may use.
 *
 * Access to a connector is the policy engine's (`Policy.canRead`, `canWrite`, `canOwn` over the
 * connector's grants); what a configuration and an update may be is `Connector`'s. This module adds
 * what needs the stores: grantees must be members or roles of the organization, confidential
 * settings are merged from the stored configuration, and every change is audited in the
 * transaction that makes it. Passwords are write-only: no operation here returns a configuration
 * except `resolveForUse`, whose callers are other use cases, never a response.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AgentRepo } from "./AgentRepo.js"
import * as AuditLog from "./AuditLog.js"
import { Auditor } from "./Auditor.js"
import * as Connector from "./Connector.js"
import { ConnectorFiles, type Upload } from "./ConnectorFiles.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { ConnectorTester } from "./ConnectorTester.js"
import { enforce } from "./Decision.js"
import { Conflict, InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import type { ConnectorId, OrganizationId } from "./Ids.js"
import { policyAccess } from "./internal/connectorUse.js"
import { MemberRepo } from "./MemberRepo.js"
import { PlaybookRepo } from "./PlaybookRepo.js"
import * as Policy from "./Policy.js"
import { RoleRepo } from "./RoleRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * A FILES connector to make: its files, and optionally its name (the files' names by default) and
 * access.
 *
 * @since 0.1.0
 * @category models
 */
export interface FilesRequest {
  readonly uploads: ReadonlyArray<Upload>
  readonly name?: string | undefined
  readonly access?: Connector.SetConnectorAccess | undefined
}

/**
 * The connectors use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Connectors extends Context.Tag("@sightline/core/Connectors")<Connectors, Connectors.Service>() {}

export declare namespace Connectors {
  /** The operations of `/v2/connectors`. The caller comes first; every lookup is scoped to its organization. */
  export interface Service {
    /** `GET /v2/connectors` (`connector:read`): the connectors the caller can use (owner, grants, public), by id. */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<Connector.ListConnectorsResponse, Unauthenticated | PermissionDenied>
    /** `GET /v2/connectors/types` (`connector:read`): every type with its settings. */
    readonly types: (
      principal: Policy.Principal
    ) => Effect.Effect<Connector.ConnectorTypesResponse, Unauthenticated | PermissionDenied>
    /**
     * `POST /v2/connectors` (`connector:write`): the caller becomes the owner; `access` adds grants
     * (to members and roles of the organization, else `InvalidRequest`) and may make it public.
     */
    readonly create: (
      principal: Policy.Principal,
      request: Connector.CreateConnectorRequest
    ) => Effect.Effect<Connector.Connector, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * `POST /v2/connectors` with files (`connector:write`): a FILES connector, a table per file,
     * made as `create` makes any connector.
     */
    readonly createFromFiles: (
      principal: Policy.Principal,
      request: FilesRequest
    ) => Effect.Effect<Connector.Connector, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * The FILES connector of the tables a question was sent with (`chat:write`): the asker's own,
     * shared with nobody, named after its files.
     */
    readonly createForChat: (
      principal: Policy.Principal,
      uploads: ReadonlyArray<Upload>
    ) => Effect.Effect<Connector.Connector, Unauthenticated | PermissionDenied | InvalidRequest>
    /** `GET /v2/connectors/{id}/files` (any access): a FILES connector's tables; another type is `InvalidRequest`. */
    readonly files: (
      principal: Policy.Principal,
      id: ConnectorId
    ) => Effect.Effect<Connector.FilesResponse, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /**
     * `POST /v2/connectors/{id}/files` (editor access and `connector:write`): adds files to a FILES
     * connector; a file whose table it has replaces that table, under its name. Two changes at once:
     * the later one is a `Conflict`.
     */
    readonly addFiles: (
      principal: Policy.Principal,
      id: ConnectorId,
      uploads: ReadonlyArray<Upload>
    ) => Effect.Effect<
      Connector.FilesResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
    /** `DELETE /v2/connectors/{id}/files/{table}` (editor access and `connector:write`): removes a table. */
    readonly removeTable: (
      principal: Policy.Principal,
      id: ConnectorId,
      table: string
    ) => Effect.Effect<
      Connector.FilesResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
    /**
     * `POST /v2/connectors/test`: tries a configuration; a failed connection is `{success: false}`.
     * Without `connector_id` it needs `connector:write`; with it, editor access to that connector,
     * whose confidential settings fill the empty ones (a stored password is only ever sent where
     * someone allowed to edit the connector points it).
     */
    readonly test: (
      principal: Policy.Principal,
      request: Connector.TestConnectorRequest
    ) => Effect.Effect<
      Connector.TestConnectorResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest
    >
    /**
     * `PATCH /v2/connectors/{id}` (editor access and `connector:write`): the full configuration is
     * sent, empty confidential settings keep the stored ones, and changing the type is `InvalidRequest`.
     */
    readonly update: (
      principal: Policy.Principal,
      id: ConnectorId,
      request: Connector.UpdateConnectorRequest
    ) => Effect.Effect<Connector.Connector, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** `DELETE /v2/connectors/{id}` (owner access and `connector:write`). */
    readonly delete: (
      principal: Policy.Principal,
      id: ConnectorId
    ) => Effect.Effect<Connector.DeleteConnectorResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/connectors/{id}/access` (editor access and `connector:write`). */
    readonly getAccess: (
      principal: Policy.Principal,
      id: ConnectorId
    ) => Effect.Effect<Connector.ConnectorAccess, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `PUT /v2/connectors/{id}/access` (owner access and `connector:write`): replaces the access in
     * one step, keeping the caller's own owner grant.
     */
    readonly putAccess: (
      principal: Policy.Principal,
      id: ConnectorId,
      request: Connector.SetConnectorAccess
    ) => Effect.Effect<Connector.ConnectorAccess, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /**
     * The stored connectors the caller may use (`connector:read` and any access), in the order
     * asked, each once; `NotFound` when any of them is missing or invisible. For other use cases
     * (agents, sandboxes): the records carry the confidential settings and never go on the wire.
     */
    readonly resolveForUse: (
      principal: Policy.Principal,
      connectorIds: ReadonlyArray<ConnectorId>
    ) => Effect.Effect<ReadonlyArray<Connector.ConnectorRecord>, Unauthenticated | PermissionDenied | NotFound>
  }
}

// A configuration's settings in their encoded form, where a `Redacted` password is its text: only
// for comparing two configurations here, never to be returned or logged.
const encodedSettings = (config: Connector.ConnectorConfig): Readonly<Record<string, unknown>> =>
  (Schema.encodeSync(Connector.ConnectorConfig)(config) as unknown as Record<string, Record<string, unknown>>)[
    Connector.configKey(config.connector_type)
  ] ?? {}

// The names of what an update changed (`name`, `postgres.host`, flags), for the audit log: names
// only, so a changed password shows as `postgres.password` and never as its value.
const changedFields = (before: Connector.ConnectorRecord, after: Connector.ConnectorRecord): ReadonlyArray<string> => {
  const key = Connector.configKey(after.config.connector_type)
  const [was, is] = [encodedSettings(before.config), encodedSettings(after.config)]
  const settings = Arr.dedupe([...Object.keys(was), ...Object.keys(is)]).filter((name) =>
    JSON.stringify(was[name]) !== JSON.stringify(is[name])
  )
  return [
    ...(before.config.name === after.config.name ? [] : ["name"]),
    ...settings.map((name) => `${key}.${name}`),
    ...(["allow_sql_write_operations", "include_db_session_metadata"] as const).filter((flag) =>
      before[flag] !== after[flag]
    )
  ]
}

// What an access change looks like in the audit log: who, at which level, until when.
const accessDetails = (access: Connector.ConnectorAccess): AuditLog.Details => ({
  is_public: access.is_public,
  grants: access.grants.map((grant) => ({
    ...(grant.member_id === undefined ? {} : { member_id: grant.member_id }),
    ...(grant.role_id === undefined ? {} : { role_id: grant.role_id }),
    access_type: grant.access_type,
    ...(grant.expires_at === undefined ? {} : { expires_at: DateTime.formatIso(grant.expires_at) })
  }))
})

/**
 * Builds the connectors use cases over the repositories and the tester in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const connectors = yield* ConnectorRepo
  const agentRepo = yield* AgentRepo
  const playbookRepo = yield* PlaybookRepo
  const members = yield* MemberRepo
  const roles = yield* RoleRepo
  const tester = yield* ConnectorTester
  const files = yield* ConnectorFiles
  const tx = yield* Transaction
  const auditor = yield* Auditor
  const audit = (principal: Policy.Principal, entry: Omit<Auditor.Entry, "resourceType">) =>
    auditor.recordBy(principal, { ...entry, resourceType: "connector" })

  // A connector with its access, or `NotFound`: the two are stored together, so one without the
  // other is simply absent. `forUpdate` locks the connector for the surrounding transaction.
  const load = Effect.fnUntraced(function*(organizationId: OrganizationId, id: ConnectorId, forUpdate: boolean) {
    const record = yield* (forUpdate ? connectors.getForUpdate : connectors.get)(organizationId, id)
    const access = yield* connectors.getAccess(organizationId, id)
    if (Option.isNone(record) || Option.isNone(access)) return yield* new NotFound()
    return { record: record.value, access: access.value }
  })

  // Loads a connector and enforces a policy question on it; an invisible one is `NotFound`.
  const authorize = Effect.fnUntraced(function*(
    principal: Policy.Principal,
    id: ConnectorId,
    decide: typeof Policy.canRead,
    forUpdate = false
  ) {
    const loaded = yield* load(principal.organizationId, id, forUpdate)
    const now = yield* DateTime.now
    yield* enforce(
      decide(principal, "connector", policyAccess(loaded.record, loaded.access, now), now)
    )
    return loaded
  })

  // Grants may only name live members and roles of the caller's organization. The message is the
  // same for a member that does not exist and one of another organization, so it reveals nothing.
  const checkGrantees = Effect.fnUntraced(function*(
    organizationId: OrganizationId,
    grants: ReadonlyArray<Connector.AccessGrantInput>
  ) {
    for (const grant of grants) {
      if (grant.member_id !== undefined) {
        const member = yield* members.get(organizationId, grant.member_id)
        if (Option.isNone(member) || member.value.deleted_at !== undefined) {
          return yield* new InvalidRequest({
            message: `member ${grant.member_id} is not a member of this organization`
          })
        }
      }
      if (grant.role_id !== undefined && Option.isNone(yield* roles.get(organizationId, grant.role_id))) {
        return yield* new InvalidRequest({ message: `role ${grant.role_id} is not a role of this organization` })
      }
    }
  })

  const list = Traced.fn("Connectors.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "connector:read"))
    const now = yield* DateTime.now
    const all = yield* connectors.listWithAccess(principal.organizationId)
    return all
      .filter(({ access, connector }) =>
        Option.isSome(Policy.objectAccess(principal, policyAccess(connector, access, now), now))
      )
      .map(({ connector }) => Connector.toConnector(connector))
  })

  const types = Traced.fn("Connectors.types")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "connector:read"))
    return { types: Connector.types }
  })

  // The bytes of the organization's FILES connectors' databases.
  const usedBytes = (organizationId: OrganizationId) =>
    Effect.map(connectors.listWithAccess(organizationId), (all) =>
      all.reduce(
        (sum, { connector }) =>
          sum + (connector.config.connector_type === "FILES" ? connector.config.files.size_bytes : 0),
        0
      ))

  // Each file within the deployment's size, and the organization's databases with these added
  // (counted at about their files' size) within its quota.
  const withinLimits = (organizationId: OrganizationId, uploads: ReadonlyArray<Upload>) =>
    Effect.gen(function*() {
      const { maxFileBytes, maxOrganizationBytes } = files.limits
      for (const upload of uploads) {
        if (upload.sizeBytes > maxFileBytes) {
          return yield* new InvalidRequest({
            message: `${upload.fileName}: ${upload.sizeBytes} bytes, past the ${maxFileBytes} bytes a file may have`
          })
        }
      }
      const used = yield* usedBytes(organizationId)
      const adding = uploads.reduce((sum, upload) => sum + upload.sizeBytes, 0)
      if (used + adding > maxOrganizationBytes) {
        return yield* new InvalidRequest({
          message: `the organization's files would take ${used + adding} bytes, past its ${maxOrganizationBytes}`
        })
      }
    })

  const store = (principal: Policy.Principal, request: Connector.CreateConnectorRequest) =>
    tx.withTransaction(Effect.gen(function*() {
      const access = Connector.initialAccess(principal.memberId, request.access)
      const record = yield* connectors.create(
        Connector.make({
          organizationId: principal.organizationId,
          ownerId: principal.memberId,
          config: request.config,
          at: yield* DateTime.now
        }),
        access
      )
      yield* audit(principal, {
        action: "connector.create",
        resourceId: String(record.id),
        details: { name: record.config.name, connector_type: record.config.connector_type, ...accessDetails(access) }
      })
      return Connector.toConnector(record)
    }))

  const create = Traced.fn("Connectors.create")(function*(
    principal: Policy.Principal,
    request: Connector.CreateConnectorRequest
  ) {
    yield* enforce(Policy.requirePermission(principal, "connector:write"))
    if (request.config.connector_type === "FILES") {
      return yield* new InvalidRequest({
        message: "a FILES connector is made from files: send them as multipart/form-data, one `files` part each"
      })
    }
    yield* checkGrantees(principal.organizationId, request.access?.grants ?? [])
    return yield* store(principal, request)
  })

  const createFromFiles = Traced.fn("Connectors.createFromFiles")(function*(
    principal: Policy.Principal,
    request: FilesRequest
  ) {
    yield* enforce(Policy.requirePermission(principal, "connector:write"))
    return yield* makeFromFiles(principal, request)
  })

  const createForChat = Traced.fn("Connectors.createForChat")(function*(
    principal: Policy.Principal,
    uploads: ReadonlyArray<Upload>
  ) {
    yield* enforce(Policy.requirePermission(principal, "chat:write"))
    const names = uploads.map((upload) => upload.fileName).join(", ")
    return yield* makeFromFiles(principal, { uploads, name: `Chat files: ${names}`.slice(0, 200) })
  })

  const makeFromFiles = (principal: Policy.Principal, request: FilesRequest) =>
    Effect.gen(function*() {
      if (request.uploads.length === 0) {
        return yield* new InvalidRequest({ message: "send at least one file, as a `files` part" })
      }
      yield* checkGrantees(principal.organizationId, request.access?.grants ?? [])
      yield* withinLimits(principal.organizationId, request.uploads)
      const settings = yield* files.load(principal.organizationId, request.uploads)
      const name = request.name ?? request.uploads.map((upload) => upload.fileName).join(", ").slice(0, 200)
      const config = yield* Effect.mapError(
        Schema.decodeUnknown(Connector.FilesConfig)({ connector_type: "FILES", name, files: settings }),
        (error) => new InvalidRequest({ message: error.message })
      )
      // What was kept goes again when the connector could not be stored.
      return yield* store(principal, { config, ...(request.access === undefined ? {} : { access: request.access }) })
        .pipe(Effect.tapErrorCause(() => files.remove(settings)))
    })

  const test = Traced.fn("Connectors.test")(function*(
    principal: Policy.Principal,
    request: Connector.TestConnectorRequest
  ) {
    if (request.connector_id === undefined) {
      yield* enforce(Policy.requirePermission(principal, "connector:write"))
      return yield* tester.test(yield* Connector.completeConfig(request.config))
    }
    const { record } = yield* authorize(principal, request.connector_id, Policy.canWrite)
    return yield* tester.test(yield* Connector.mergeConfig(record.config, request.config))
  })

  const update = Traced.fn("Connectors.update")(function*(
    principal: Policy.Principal,
    id: ConnectorId,
    request: Connector.UpdateConnectorRequest
  ) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const { record } = yield* authorize(principal, id, Policy.canWrite, true)
      const updated = yield* Connector.applyUpdate(record, request, yield* DateTime.now)
      const changed = changedFields(record, updated)
      // A PATCH that changes nothing writes nothing: `updated_at` and the log only move on changes.
      if (changed.length === 0) return Connector.toConnector(record)
      yield* connectors.update(updated)
      yield* audit(principal, { action: "connector.update", resourceId: String(id), details: { changed } })
      return Connector.toConnector(updated)
    }))
  })

  const filesOf = (record: Connector.ConnectorRecord) =>
    record.config.connector_type === "FILES"
      ? Effect.succeed(record.config)
      : Effect.fail(
        new InvalidRequest({ message: `connector ${record.id} is ${record.config.connector_type}, not FILES` })
      )

  const filesResponse = (record: Connector.ConnectorRecord, config: typeof Connector.FilesConfig.Type) => ({
    connector_id: record.id,
    name: config.name,
    tables: config.files.tables,
    size_bytes: config.files.size_bytes
  })

  const listFiles = Traced.fn("Connectors.files")(function*(principal: Policy.Principal, id: ConnectorId) {
    const { record } = yield* authorize(principal, id, Policy.canRead)
    return filesResponse(record, yield* filesOf(record))
  })

  // A new version of the connector's database, stored only if nobody changed it meanwhile.
  const changeFiles = (
    principal: Policy.Principal,
    id: ConnectorId,
    uploads: ReadonlyArray<Upload>,
    drop: ReadonlyArray<string>
  ) =>
    Effect.gen(function*() {
      yield* enforce(Policy.requirePermission(principal, "connector:write"))
      const { record } = yield* authorize(principal, id, Policy.canWrite)
      const current = yield* filesOf(record)
      if (drop.some((table) => !current.files.tables.some((t) => t.table === table))) return yield* new NotFound()
      if (uploads.length === 0 && current.files.tables.every((t) => drop.includes(t.table))) {
        return yield* new InvalidRequest({
          message: "a FILES connector keeps at least one table: delete the connector"
        })
      }
      yield* withinLimits(principal.organizationId, uploads)
      const settings = yield* files.change(principal.organizationId, current.files, uploads, drop)
      const stored = yield* tx.withTransaction(Effect.gen(function*() {
        const { record: latest } = yield* authorize(principal, id, Policy.canWrite, true)
        const latestFiles = yield* filesOf(latest)
        if (latestFiles.files.storage_prefix !== current.files.storage_prefix) {
          return yield* new Conflict({ message: "the connector's files changed meanwhile: send the change again" })
        }
        const updated = new Connector.ConnectorRecord({
          ...latest,
          config: { ...latestFiles, files: settings },
          updated_at: yield* DateTime.now
        })
        yield* connectors.update(updated)
        yield* audit(principal, {
          action: "connector.update",
          resourceId: String(id),
          details: {
            changed: ["files"],
            ...(uploads.length === 0 ? {} : { added: uploads.map((upload) => upload.fileName).join(", ") }),
            ...(drop.length === 0 ? {} : { removed: drop.join(", ") })
          }
        })
        return updated
      })).pipe(Effect.tapErrorCause(() => files.remove(settings)))
      // The previous version is no longer read by anyone who asks from now on.
      yield* files.remove(current.files)
      return filesResponse(stored, { ...current, files: settings })
    })

  const addFiles = Traced.fn("Connectors.addFiles")(
    function*(principal: Policy.Principal, id: ConnectorId, uploads: ReadonlyArray<Upload>) {
      if (uploads.length === 0) {
        return yield* new InvalidRequest({ message: "send at least one file, as a `files` part" })
      }
      return yield* changeFiles(principal, id, uploads, [])
    }
  )

  const removeTable = Traced.fn("Connectors.removeTable")(
    (principal: Policy.Principal, id: ConnectorId, table: string) => changeFiles(principal, id, [], [table])
  )

  const remove = Traced.fn("Connectors.delete")(function*(principal: Policy.Principal, id: ConnectorId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const { record } = yield* authorize(principal, id, Policy.canOwn, true)
      // Agents and playbooks lose it in the same transaction: one that kept the id would be hidden
      // from everyone, its owner included (nobody reaches all of its connectors), and could never
      // be read, fixed or deleted again.
      yield* connectors.delete(principal.organizationId, id)
      const now = yield* DateTime.now
      yield* agentRepo.detachConnector(principal.organizationId, id, now)
      yield* playbookRepo.detachConnector(principal.organizationId, id, now)
      yield* audit(principal, {
        action: "connector.delete",
        resourceId: String(id),
        details: { name: record.config.name, connector_type: record.config.connector_type }
      })
      return record
    })).pipe(
      // A FILES connector's database goes once the connector is gone.
      Effect.tap((record) =>
        record.config.connector_type === "FILES" ? files.remove(record.config.files) : Effect.void
      ),
      Effect.as({ id, success: true })
    )
  })

  const getAccess = Traced.fn("Connectors.getAccess")(function*(principal: Policy.Principal, id: ConnectorId) {
    // Editors may see who else uses what they edit; viewers may not see who else it is shared with.
    const { access } = yield* authorize(principal, id, Policy.canWrite)
    return access
  })

  const putAccess = Traced.fn("Connectors.putAccess")(function*(
    principal: Policy.Principal,
    id: ConnectorId,
    request: Connector.SetConnectorAccess
  ) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const { access } = yield* authorize(principal, id, Policy.canOwn, true)
      yield* checkGrantees(principal.organizationId, request.grants)
      const replaced = Connector.replaceAccess(access, request, principal.memberId)
      yield* connectors.setAccess(principal.organizationId, id, replaced)
      yield* audit(principal, {
        action: "connector.access_update",
        resourceId: String(id),
        details: accessDetails(replaced)
      })
      return replaced
    }))
  })

  const resolveForUse = Traced.fn("Connectors.resolveForUse")(function*(
    principal: Policy.Principal,
    connectorIds: ReadonlyArray<ConnectorId>
  ) {
    return yield* Effect.forEach(
      Arr.dedupe(connectorIds),
      (id) => Effect.map(authorize(principal, id, Policy.canRead), ({ record }) => record)
    )
  })

  return Connectors.of({
    createFromFiles,
    createForChat,
    files: listFiles,
    addFiles,
    removeTable,
    list,
    types,
    create,
    test,
    update,
    delete: remove,
    getAccess,
    putAccess,
    resolveForUse
  })
})

/**
 * The connectors use cases over `ConnectorRepo`, `ConnectorTester`, `MemberRepo`, `RoleRepo`,
 * `Transaction`, `Auditor` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Connectors, make)

/**
 * The dashboard use cases (`/v2/dashboards`): list and read the dashboards of the library the
 * caller may read, run a dashboard's tiles for the caller, and change dashboards as library
 * changes: a chat's answer pinned, tiles built by the agent, tiles renamed or moved.
 *
 * A dashboard is read from main under the caller's OWNERS read authority, so a dashboard the
 * caller may not read does not exist for it. Its tiles run concurrently on its connector, each under the
 * caller's row-level security: semantic and verified queries are planned for the caller (its
 * client attributes bound, a derived model refused where raw SQL would be), and SQL runs only
 * where the caller may run SQL. A tile's result is kept for the next viewer by what decides it:
 * the library commit, the tile, the filter values, the connector and the caller's client
 * attributes, so two end users of one host with different attributes never share a tile's rows.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Change from "./Change.js"
import { Changes } from "./Changes.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import type * as Connector from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboard from "./Dashboard.js"
import * as DashboardEdits from "./DashboardEdits.js"
import * as DashboardTiles from "./DashboardTiles.js"
import * as Decision from "./Decision.js"
import * as EndUser from "./EndUser.js"
import { type Conflict, InvalidRequest, NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import type { CellId, ChatId, OrganizationId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import * as SqlStatement from "./internal/sqlStatement.js"
import { Library } from "./Library.js"
import * as LibraryLib from "./Library.js"
import type * as Owners from "./Owners.js"
import * as Policy from "./Policy.js"
import type * as SemanticCompiler from "./SemanticCompiler.js"
import { SemanticLayer } from "./SemanticLayer.js"
import * as SemanticLayerLib from "./SemanticLayer.js"
import type * as SemanticQuery from "./SemanticQuery.js"
import * as Traced from "./Traced.js"

/**
 * The dashboard use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Dashboards extends Context.Tag("@sightline/core/Dashboards")<Dashboards, Dashboards.Service>() {}

export declare namespace Dashboards {
  export interface Service {
    /** `GET /v2/dashboards`: the dashboards of main the caller may read. */
    readonly list: (principal: Policy.Principal) => Effect.Effect<Dashboard.ListResponse, Unauthenticated>
    /** `GET /v2/dashboards/{name}`: one, with the commit it was read at (`NotFound` when unreadable). */
    readonly get: (
      principal: Policy.Principal,
      name: string
    ) => Effect.Effect<Dashboard.View, Unauthenticated | NotFound | InvalidRequest>
    /** `POST /v2/dashboards/{name}/query`: every tile's rows for the caller; a failing tile fails alone. */
    readonly query: (
      principal: Policy.Principal,
      name: string,
      request: Dashboard.QueryRequest
    ) => Effect.Effect<Dashboard.QueryResponse, Unauthenticated | NotFound | InvalidRequest | PermissionDenied>
    /**
     * Files the change that creates a dashboard of these tiles, or adds them to the one of that
     * name (`build_dashboard`). The tiles are compiled against the library's model of the
     * connector first: what would fail the change's checks is refused here, saying why.
     */
    readonly build: (
      principal: Policy.Principal,
      request: Dashboard.BuildRequest,
      options?: BuildOptions
    ) => Effect.Effect<
      Dashboard.BuildResult,
      Unauthenticated | NotFound | InvalidRequest | PermissionDenied | Conflict
    >
    /** `POST /v2/dashboards/{name}/edit`: files the change that renames or moves tiles (`NotFound` when unreadable). */
    readonly edit: (
      principal: Policy.Principal,
      name: string,
      request: Dashboard.EditRequest
    ) => Effect.Effect<
      Dashboard.EditResult,
      Unauthenticated | NotFound | InvalidRequest | PermissionDenied | Conflict
    >
    /** `POST /v2/chats/{id}/cells/{cellId}/pin`: files the change that adds the cell's query as a tile. */
    readonly pin: (
      principal: Policy.Principal,
      chatId: ChatId,
      cellId: CellId,
      request: Dashboard.PinRequest
    ) => Effect.Effect<
      Dashboard.PinResult,
      Unauthenticated | NotFound | InvalidRequest | PermissionDenied | Conflict
    >
  }
}

/**
 * Who builds a dashboard: the chat it was asked in, and whether a model wrote it.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuildOptions {
  readonly chatId?: ChatId | undefined
  readonly aiGenerated?: boolean | undefined
}

/** How many tiles of one dashboard run at once. */
const tileConcurrency = 8

/** How many tiles' results the cache keeps (each at most `Dashboard.maxTileRows` rows). */
const cacheEntries = 512

interface Kept {
  readonly tile: Dashboard.TileResult
  /** When its statement started. */
  readonly at: number
}

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/**
 * Builds the use cases over the services in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const library = yield* Library
  const semantic = yield* SemanticLayer
  const connectors = yield* ConnectorRepo
  const runtime = yield* ConnectorRuntime.ConnectorRuntime
  const chats = yield* ChatRepo
  const changes = yield* Changes

  // Results by organization, then by what decides them. An organization's entries go when its
  // main moves; the oldest go first when the cache is full.
  const cache = new Map<string, Kept>()
  const heads = new Map<OrganizationId, string>()
  const forget = (organizationId: OrganizationId, head: string) => {
    if (heads.get(organizationId) === head) return
    heads.set(organizationId, head)
    const prefix = `${organizationId}\n`
    for (const key of cache.keys()) if (key.startsWith(prefix)) cache.delete(key)
  }

  const readable = (principal: Policy.Principal) =>
    Effect.map(library.snapshotFor(principal), (view) => ({
      commit: Option.getOrUndefined(view.ref),
      files: view.files
    }))

  const list = Traced.fn("Dashboards.list")(function*(principal: Policy.Principal) {
    const { commit, files } = yield* Effect.catchTag(readable(principal), "NotFound", Effect.die)
    const endUser = Policy.endUserOf(principal)
    const dashboards = [...HashMap.keys(files)].filter((path) =>
      Dashboard.isDashboardPath(path) && EndUser.allows(endUser?.dashboards, Dashboard.nameOf(path))
    ).sort().map(
      (path): Dashboard.Summary => {
        const name = Dashboard.nameOf(path)
        return Either.match(Dashboard.parse(path, decoder.decode(HashMap.unsafeGet(files, path))), {
          onLeft: (problems) => ({ name, path, problems: problems.map(Dashboard.formatProblem) }),
          onRight: (file) => ({
            name,
            path,
            title: file.title,
            ...(file.description === undefined ? {} : { description: file.description }),
            connector: file.connector,
            tiles: file.tiles.length
          })
        })
      }
    )
    return { ...(commit === undefined ? {} : { commit }), dashboards }
  })

  // Main's dashboards and OWNERS tree by commit (commits never change), so a viewer's request reads
  // only where main is, not the library's files.
  const atCommit = new Map<string, {
    readonly tree: Owners.OwnersTree
    readonly dashboards: ReadonlyMap<string, Either.Either<Dashboard.DashboardFile, string>>
  }>()
  const mainAt = (organizationId: OrganizationId, head: string) =>
    Effect.gen(function*() {
      const key = `${organizationId}:${head}`
      const kept = atCommit.get(key)
      if (kept !== undefined) return kept
      const files = yield* Effect.orDie(library.at(organizationId, head))
      const dashboards = new Map(
        [...HashMap.keys(files)].filter(Dashboard.isDashboardPath).map((path) => [
          path,
          Either.mapLeft(
            Dashboard.parse(path, decoder.decode(HashMap.unsafeGet(files, path))),
            (problems) => `${path} does not read: ${problems.map(Dashboard.formatProblem).join("; ")}`
          )
        ])
      )
      const read = { tree: LibraryLib.treeOf(files), dashboards }
      if (atCommit.size >= 64) atCommit.delete(atCommit.keys().next().value!)
      atCommit.set(key, read)
      return read
    })

  const read = (principal: Policy.Principal, name: string) =>
    Effect.gen(function*() {
      yield* Decision.enforce(Policy.authenticated(principal))
      const head = Option.getOrUndefined(yield* library.head(principal.organizationId))
      const missing = new NotFound({ message: `no dashboard named ${name}` })
      // An end user's session reaches only the dashboards it names.
      if (head === undefined || !EndUser.allows(Policy.endUserOf(principal)?.dashboards, name)) return yield* missing
      const { dashboards, tree } = yield* mainAt(principal.organizationId, head)
      const path = [Dashboard.pathOf(name), `${Dashboard.folder}${name}.yml`].find((p) => dashboards.has(p))
      // A dashboard the caller may not read is as absent as one that does not exist.
      if (path === undefined) return yield* missing
      const caller = yield* library.callerOf(principal)
      if (Decision.isDeny(LibraryLib.readsAll(tree, caller, [path]))) return yield* missing
      const file = yield* Either.mapLeft(dashboards.get(path)!, (message) => new InvalidRequest({ message }))
      return { name, path, commit: head, definition: file }
    })

  const get = Traced.fn("Dashboards.get")(function*(principal: Policy.Principal, name: string) {
    return yield* read(principal, name)
  })

  /** Runs a statement for the caller. */
  const run = (
    principal: Policy.Principal,
    connector: Connector.ConnectorRecord,
    statement: { readonly sql: string; readonly params: ReadonlyArray<SemanticCompiler.Param> }
  ) =>
    Effect.mapError(
      runtime.query(connector, {
        sql: statement.sql,
        params: statement.params,
        clientAttributesJson: Policy.clientAttributesJson(principal),
        maxRows: Dashboard.maxTileRows,
        timeoutMillis: ConnectorRuntime.defaultTimeoutMillis
      }),
      (error) => `query failed: ${error.message}`
    )

  const query = Traced.fn("Dashboards.query")(function*(
    principal: Policy.Principal,
    name: string,
    request: Dashboard.QueryRequest
  ) {
    const { commit, definition: file } = yield* read(principal, name)
    forget(principal.organizationId, commit)
    const shared = new Set((file.filters?.dimensions ?? []).map((filter) => filter.dimension))
    const unknown = Object.keys(request.filters?.dimensions ?? {}).filter((dimension) => !shared.has(dimension))
    if (unknown.length > 0) {
      return yield* new InvalidRequest({
        message: `filters.dimensions: ${unknown.join(", ")} ${unknown.length === 1 ? "is" : "are"} not a filter of ` +
          `dashboard ${name} (${[...shared].join(", ") || "it has none"})`
      })
    }
    const usable = yield* ConnectorUse.usable(connectors, principal, principal.organizationId, yield* DateTime.now)
    const connector = usable.find((c) => c.config.name === file.connector)
    if (connector === undefined) {
      return yield* new PermissionDenied({
        message: `permission denied: dashboard ${name} shows connector ${file.connector}, which you may not use`
      })
    }
    // The model at the dashboard's commit (read once per commit, as the dashboard was), only for
    // tiles that were not kept.
    const governingOf = yield* Effect.cached(
      Effect.flatMap(semantic.modelsFor(principal, [connector], commit), (models) => models[0]!)
    )
    // What decides a tile's result: the commit (the dashboard, its model), the tile, the filter
    // values, the connector, and the caller's client attributes (its row-level security). Whether
    // the caller may see it was decided above, on this request.
    const keyOf = (index: number) =>
      `${principal.organizationId}\n${
        JSON.stringify([
          commit,
          name,
          index,
          connector.id,
          request.filters ?? {},
          Policy.clientAttributesJson(principal)
        ])
      }`
    const values: Dashboard.FilterValues = {
      dimensions: request.filters?.dimensions,
      time: request.filters?.time
    }

    const tileResult = (index: number) =>
      Effect.gen(function*() {
        const tile = file.tiles[index]!
        const base = {
          index,
          title: tile.title,
          visualization: tile.visualization,
          layout: tile.layout
        }
        const failed = (error: string): Dashboard.TileResult => ({
          ...base,
          status: "failed",
          error,
          columns: [],
          rows: [],
          truncated: false,
          cached: false
        })
        const key = keyOf(index)
        const ttl = file.cache_seconds
        const kept = cache.get(key)
        if (kept !== undefined && (ttl === undefined || Date.now() - kept.at < ttl * 1_000)) {
          return { ...kept.tile, cached: true }
        }
        const governing = yield* Effect.either(governingOf)
        if (Either.isLeft(governing)) return failed(governing.left.message)
        const planned = planTile(principal, connector, governing.right, file, tile, values)
        if (Either.isLeft(planned)) return failed(planned.left)
        const { columns, previous, reading, statement, trusted } = planned.right
        const at = Date.now()
        const [ran, before] = yield* Effect.all([
          Effect.either(run(principal, connector, statement)),
          previous === undefined
            ? Effect.succeed(undefined)
            : Effect.either(run(principal, connector, previous.statement))
        ], { concurrency: 2 })
        if (Either.isLeft(ran)) return failed(ran.left)
        const result = ran.right
        const named: ReadonlyArray<Dashboard.TileColumn> = result.columns.map((column, i) => ({
          name: column.name,
          type: column.type,
          ...(columns?.[i] === undefined ? {} : { kind: columns[i].kind }),
          ...(columns?.[i]?.format === undefined ? {} : { format: columns[i].format }),
          ...(columns?.[i]?.unit === undefined ? {} : { unit: columns[i].unit })
        }))
        const chart = DashboardTiles.chartOf(tile, named, result.rows)
        if (chart !== undefined && Either.isLeft(chart)) return { ...failed(chart.left), sql: statement.sql }
        const figure = tile.visualization.type !== "figure" ? undefined : DashboardTiles.figureOf(
          named,
          result.rows,
          previous === undefined || before === undefined || Either.isLeft(before)
            ? undefined
            : { ...previous.period, rows: before.right.rows }
        )
        const answered: Dashboard.TileResult = {
          ...base,
          status: "ok" as const,
          sql: statement.sql,
          columns: named,
          rows: result.rows,
          truncated: result.truncated,
          ...(reading === undefined ? {} : { reading }),
          ...(trusted === undefined ? {} : { trusted }),
          ...(chart === undefined ? {} : { chart: chart.right }),
          ...(figure === undefined ? {} : { figure }),
          cached: false
        }
        // Only a whole answer is kept: a tile that failed, or whose comparison failed, runs again.
        if (ttl !== 0 && (before === undefined || Either.isRight(before))) {
          cache.delete(key)
          if (cache.size >= cacheEntries) cache.delete(cache.keys().next().value!)
          cache.set(key, { tile: answered, at })
        }
        return answered
      })

    const tiles = yield* Effect.forEach(file.tiles.map((_, i) => i), tileResult, { concurrency: tileConcurrency })
    return { name, title: file.title, commit, connector_id: connector.id, tiles }
  })

  const pin = Traced.fn("Dashboards.pin")(function*(
    principal: Policy.Principal,
    chatId: ChatId,
    cellId: CellId,
    request: Dashboard.PinRequest
  ) {
    yield* Decision.enforce(Policy.requirePermission(principal, "chat:read"))
    const chat = yield* chats.get(principal.organizationId, chatId)
    if (Option.isNone(chat)) return yield* new NotFound()
    yield* Decision.enforce(Policy.canRead(principal, "chat", Chats.accessOf(chat.value), yield* DateTime.now))
    const found = yield* chats.getCell(principal.organizationId, chatId, cellId)
    if (Option.isNone(found)) return yield* new NotFound()
    const cell = found.value
    if (cell.status !== "completed" || cell.connector_id === undefined) {
      return yield* new InvalidRequest({ message: "only a completed query's cell can be pinned" })
    }
    const connector = (yield* ConnectorUse.usable(
      connectors,
      principal,
      principal.organizationId,
      yield* DateTime.now
    )).find((c) => c.id === cell.connector_id)
    if (connector === undefined) {
      return yield* new InvalidRequest({ message: `the cell's connector ${cell.connector_id} is not one you may use` })
    }
    const tileQuery = yield* queryOfCell(principal, connector, cell)
    const main = yield* library.main(principal.organizationId)
    const path = Dashboard.pathOf(request.dashboard)
    const text = Option.getOrUndefined(Option.map(HashMap.get(main.files, path), (bytes) => decoder.decode(bytes)))
    const title = request.title ?? (yield* questionBefore(chatId, cell)) ?? "Pinned answer"
    const added = yield* Either.mapLeft(
      DashboardEdits.withTile(request.dashboard, text, connector.config.name, {
        title,
        query: tileQuery,
        visualization: DashboardEdits.visualizationOf(tileQuery)
      }),
      (message) => new InvalidRequest({ message })
    )
    const change = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({
        // A change's title is short: the tile's is in the description.
        title: `Pin to dashboard ${request.dashboard}`.slice(0, 50),
        description: `Adds the tile "${title}" to ${path}, pinned from a chat's answer.`
      }),
      baseRef: main.head,
      edits: HashMap.make([path, Option.some(encoder.encode(added.text))]),
      chatId
    })
    return { path, tile: added.index, change }
  })

  /** The question asked last before the cell ran: the tile's title when the pin gives none. */
  const questionBefore = (
    chatId: ChatId,
    cell: { readonly organization_id: OrganizationId } & {
      readonly created_at: DateTime.Utc
    }
  ) =>
    Effect.map(
      chats.listMessages(cell.organization_id, chatId),
      (messages) =>
        messages.filter((m) => m.role === "user" && !DateTime.greaterThan(m.created_at, cell.created_at))
          .at(-1)?.content.trim().slice(0, 190) || undefined
    )

  const build = Traced.fn("Dashboards.build")(function*(
    principal: Policy.Principal,
    request: Dashboard.BuildRequest,
    options: BuildOptions = {}
  ) {
    const connector = (yield* ConnectorUse.usable(
      connectors,
      principal,
      principal.organizationId,
      yield* DateTime.now
    )).find((c) => c.id === request.connector_id)
    if (connector === undefined) {
      return yield* new InvalidRequest({
        message: `connector_id: ${request.connector_id} is not a connector you may use`
      })
    }
    const main = yield* library.main(principal.organizationId)
    // The tiles are checked as the change's checks will check them: against the library's model.
    const governing = SemanticLayerLib.governingModel(SemanticLayerLib.libraryModels(main.files), connector)
    if (governing === undefined || "problems" in governing) {
      return yield* new InvalidRequest({
        message: governing === undefined
          ? `no semantic model of the library governs connector ${connector.config.name}: a dashboard needs one`
          : `the semantic model of connector ${connector.config.name} does not read`
      })
    }
    const path = Dashboard.pathOf(request.name)
    const text = Option.getOrUndefined(Option.map(HashMap.get(main.files, path), (bytes) => decoder.decode(bytes)))
    const added = yield* Either.mapLeft(
      DashboardEdits.withTiles(request.name, text, connector.config.name, request.tiles, request),
      (message) => new InvalidRequest({ message })
    )
    const file = yield* Either.mapLeft(
      Dashboard.parse(path, added.text),
      (problems) => new InvalidRequest({ message: problems.map(Dashboard.formatProblem).join("; ") })
    )
    const problems = Dashboard.check(path, added.text, file, governing, SemanticLayerLib.dialectOf(connector))
    if (problems.length > 0) {
      return yield* new InvalidRequest({ message: problems.map(Dashboard.formatProblem).join("; ") })
    }
    const change = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({
        title: `${text === undefined ? "Dashboard" : "Edit dashboard"} ${request.name}`.slice(0, 50),
        description: `${text === undefined ? "Creates" : "Adds to"} ${path}: ${
          request.tiles.map((tile) => tile.title).join("; ")
        }.`
      }),
      baseRef: main.head,
      edits: HashMap.make([path, Option.some(encoder.encode(added.text))]),
      chatId: options.chatId,
      aiGenerated: options.aiGenerated
    })
    return { path, tiles: added.indexes, change }
  })

  const edit = Traced.fn("Dashboards.edit")(function*(
    principal: Policy.Principal,
    name: string,
    request: Dashboard.EditRequest
  ) {
    const { path } = yield* read(principal, name)
    const main = yield* library.main(principal.organizationId)
    const text = Option.getOrUndefined(Option.map(HashMap.get(main.files, path), (bytes) => decoder.decode(bytes)))
    // Main moved past the dashboard read a moment ago: the dashboard is gone.
    if (text === undefined) return yield* new NotFound({ message: `no dashboard named ${name}` })
    const next = yield* Either.mapLeft(
      DashboardEdits.edited(path, text, request.tiles),
      (message) => new InvalidRequest({ message })
    )
    const renamed = request.tiles.filter((tile) => tile.title !== undefined).length
    const moved = request.tiles.filter((tile) => tile.layout !== undefined).length
    const change = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({
        title: `Edit dashboard ${name}`.slice(0, 50),
        description: `${
          [
            renamed === 0 ? [] : [`renames ${renamed} tile${renamed === 1 ? "" : "s"}`],
            moved === 0 ? [] : [`moves ${moved} tile${moved === 1 ? "" : "s"}`]
          ].flat().join(" and ")
        } of ${path}.`.replace(/^./, (c) => c.toUpperCase())
      }),
      baseRef: main.head,
      edits: HashMap.make([path, Option.some(encoder.encode(next))])
    })
    return { path, change }
  })

  return Dashboards.of({ list, get, query, pin, build, edit })
})

/** What a cell ran, as a tile's query: its semantic query, its verified query, or its SQL where the pinner may write SQL. */
const queryOfCell = (
  principal: Policy.Principal,
  connector: Connector.ConnectorRecord,
  cell: {
    readonly semantic_query?: SemanticQuery.SemanticQuery | undefined
    readonly trusted_source?: SemanticQuery.TrustedSource | undefined
    readonly query?: string | undefined
  }
): Effect.Effect<Dashboard.TileQuery, InvalidRequest | PermissionDenied> => {
  if (cell.semantic_query !== undefined) return Effect.succeed({ semantic: cell.semantic_query })
  if (cell.trusted_source?.kind === "verified_query") {
    const { name, params } = cell.trusted_source
    return Effect.succeed({ verified: name, ...(params === undefined ? {} : { params }) })
  }
  if (cell.query === undefined) {
    return Effect.fail(new InvalidRequest({ message: "the cell ran no query to pin" }))
  }
  const refusal = ConnectorUse.writtenSqlRefusal(principal, connector) ?? SqlStatement.notOneQuery(cell.query)
  return refusal === undefined
    ? Effect.succeed({ sql: cell.query })
    : Effect.fail(new PermissionDenied({ message: `permission denied: ${refusal}` }))
}

/** What a tile runs for the caller, and how to read its rows; `Left` says why it cannot run. */
const planTile = (
  principal: Policy.Principal,
  connector: Connector.ConnectorRecord,
  governing: SemanticLayerLib.Governing,
  file: Dashboard.DashboardFile,
  tile: Dashboard.Tile,
  values: Dashboard.FilterValues
): Either.Either<{
  readonly statement: { readonly sql: string; readonly params: ReadonlyArray<SemanticCompiler.Param> }
  readonly columns?: ReadonlyArray<SemanticQuery.ResultColumn> | undefined
  readonly reading?: SemanticQuery.Reading | undefined
  readonly trusted?: SemanticQuery.TrustedSource | undefined
  readonly previous?: {
    readonly statement: { readonly sql: string; readonly params: ReadonlyArray<SemanticCompiler.Param> }
    readonly period: { readonly start: string; readonly end: string }
  } | undefined
}, string> => {
  const source = tile.query
  if ("sql" in source) {
    const refusal = ConnectorUse.rawSqlRefusal(principal, connector) ?? SqlStatement.notOneQuery(source.sql)
    return refusal === undefined ? Either.right({ statement: { sql: source.sql, params: [] } }) : Either.left(refusal)
  }
  const why = (error: SemanticLayerLib.PlanRefused | SemanticLayerLib.PlanInvalid) =>
    error._tag === "PlanRefused" ? `permission denied: ${error.reason}` : error.message
  if ("verified" in source) {
    return Either.mapBoth(
      SemanticLayerLib.plan(principal, connector, governing, {
        _tag: "Verified",
        name: source.verified,
        params: source.params ?? {}
      }),
      { onLeft: why, onRight: (planned) => ({ statement: planned, trusted: planned.trusted }) }
    )
  }
  const query = Dashboard.tileQuery(file, tile, values) ?? source.semantic
  return Either.flatMap(
    Either.mapLeft(SemanticLayerLib.plan(principal, connector, governing, { _tag: "Metrics", query }), why),
    (planned) => {
      const time = query.time
      const compares = tile.visualization.type === "figure" && tile.visualization.compare === "previous_period" &&
        time?.start !== undefined && time.end !== undefined
      const now = {
        statement: planned,
        columns: planned.compiled.columns,
        reading: planned.compiled.reading,
        trusted: planned.trusted
      }
      if (!compares) return Either.right(now)
      const period = DashboardTiles.previousPeriod({ start: time.start!, end: time.end! })
      return Either.map(
        Either.mapLeft(
          SemanticLayerLib.plan(principal, connector, governing, {
            _tag: "Metrics",
            query: { ...query, time: { ...time, ...period } }
          }),
          why
        ),
        (before) => ({ ...now, previous: { statement: before, period } })
      )
    }
  )
}

/**
 * The dashboard use cases over the services in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Dashboards, make)

/**
 * The semantic layer as callers use it: the model that governs a connector, and semantic queries
 * compiled and run on it for a caller, read-only and with its row-level security. The metrics API
 * (`POST /v2/semantic/query`), the agent's `query_metrics` and a host calling core directly all go
 * through here.
 *
 * One road: `plan` is the only place that turns a semantic query or a verified query into SQL for a
 * caller, refuses what the caller may not run, and decides whether the answer is trusted. The
 * service's operations, the chat's tools and evaluations call it; they only run the statement.
 *
 * Which model governs a connector: a library file of main whose `connector` names it, else one whose
 * `connector_type` is its type (the shipped DEMO model), else the model derived from its schema.
 * Models are read from main as a whole, not from the caller's pruned view: OWNERS rules decide who
 * edits a model, not whom it governs, so a member who cannot read `semantic/` is still held to its
 * row filters.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Record from "effect/Record"
import type * as Connector from "./Connector.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import { Connectors } from "./Connectors.js"
import * as DerivedModel from "./DerivedModel.js"
import { InvalidRequest, type NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import type { OrganizationId } from "./Ids.js"
import * as connectorUse from "./internal/connectorUse.js"
import * as Utf8 from "./internal/utf8.js"
import { Library } from "./Library.js"
import type * as LibraryDiff from "./LibraryDiff.js"
import * as Policy from "./Policy.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import * as SemanticModel from "./SemanticModel.js"
import type * as SemanticQuery from "./SemanticQuery.js"
import * as Traced from "./Traced.js"

/**
 * The model that governs a connector, and where it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Governing {
  readonly model: SemanticModel.SemanticModel
  readonly source: SemanticQuery.ModelSource
  readonly dialect: SemanticCompiler.DialectName
}

/**
 * The semantic layer.
 *
 * @since 0.1.0
 * @category services
 */
export class SemanticLayer
  extends Context.Tag("@sightline/core/SemanticLayer")<SemanticLayer, SemanticLayer.Service>()
{}

export declare namespace SemanticLayer {
  /** Models and semantic queries for callers. */
  export interface Service {
    /**
     * The model that governs a connector the caller may use. A derived model that cannot be read
     * (the connector is unreachable) is `InvalidRequest` with the database's words.
     */
    readonly modelFor: (
      principal: Policy.Principal,
      connector: Connector.ConnectorRecord
    ) => Effect.Effect<Governing, InvalidRequest>
    /**
     * The models of several connectors (a chat's), each as `modelFor` gives it, reading the library
     * once: main's, or the library at commit `at` (an answer pinned to a commit: an evaluation of a
     * change, a re-run). An unknown commit is `InvalidRequest` for each.
     */
    readonly modelsFor: (
      principal: Policy.Principal,
      connectors: ReadonlyArray<Connector.ConnectorRecord>,
      at?: string | undefined
    ) => Effect.Effect<ReadonlyArray<Either.Either<Governing, InvalidRequest>>>
    /** `GET /v2/connectors/{id}/semantic-model`: the governing model as a file (`NotFound` for a connector the caller may not use). */
    readonly modelFile: (
      principal: Policy.Principal,
      connectorId: Connector.ConnectorRecord["id"]
    ) => Effect.Effect<
      { readonly file: SemanticModel.SemanticModelFile; readonly source: SemanticQuery.ModelSource },
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest
    >
    /** `POST /v2/semantic/compile`: the SQL a query would run, and its reading. */
    readonly compile: (
      principal: Policy.Principal,
      request: SemanticQuery.SemanticQueryRequest
    ) => Effect.Effect<SemanticQuery.CompiledQuery, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * `POST /v2/semantic/query`: runs a query read-only, bound to the caller's client attributes;
     * with a window, only that page of its rows.
     */
    readonly query: (
      principal: Policy.Principal,
      request: SemanticQuery.SemanticQueryRequest,
      window?: ConnectorRuntime.Window
    ) => Effect.Effect<SemanticQuery.SemanticQueryResult, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * A verified query of the library model governing a connector, run read-only with the caller's
     * client attributes bound. A name the model does not hold (or a derived model, which holds none)
     * is `InvalidRequest`.
     */
    readonly runVerified: (
      principal: Policy.Principal,
      request: SemanticQuery.VerifiedQueryRequest,
      window?: ConnectorRuntime.Window
    ) => Effect.Effect<SemanticQuery.VerifiedQueryResult, Unauthenticated | PermissionDenied | InvalidRequest>
  }
}

/**
 * What is asked of a connector's model: a semantic query (metrics by dimensions), or one of its
 * verified queries with its parameters.
 *
 * @since 0.1.0
 * @category models
 */
export type PlanRequest = MetricsRequest | VerifiedRequest

/**
 * @since 0.1.0
 * @category models
 */
export interface MetricsRequest {
  readonly _tag: "Metrics"
  readonly query: SemanticQuery.SemanticQuery
}

/**
 * @since 0.1.0
 * @category models
 */
export interface VerifiedRequest {
  readonly _tag: "Verified"
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
}

/**
 * The statement that answers a `PlanRequest` for a caller, and whether its answer is trusted
 * (computed from definitions the organization reviewed, at a commit).
 *
 * @since 0.1.0
 * @category models
 */
export type Plan = MetricsPlan | VerifiedPlan

/**
 * @since 0.1.0
 * @category models
 */
export interface MetricsPlan {
  readonly _tag: "Metrics"
  readonly sql: string
  readonly params: ReadonlyArray<SemanticCompiler.Param>
  /** Its columns and its reading. */
  readonly compiled: SemanticCompiler.Compiled
  readonly trusted: SemanticQuery.TrustedSource | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface VerifiedPlan {
  readonly _tag: "Verified"
  readonly sql: string
  readonly params: ReadonlyArray<SemanticCompiler.Param>
  readonly query: SemanticModel.VerifiedQuery
  readonly trusted: SemanticQuery.TrustedSource | undefined
}

/**
 * The caller may not run what the model would compile: `reason` says why.
 *
 * @since 0.1.0
 * @category errors
 */
export class PlanRefused extends Data.TaggedError("PlanRefused")<{ readonly reason: string }> {}

/**
 * The request does not compile on the model (an unknown name, a bad filter, a missing parameter).
 *
 * @since 0.1.0
 * @category errors
 */
export class PlanInvalid extends Data.TaggedError("PlanInvalid")<{ readonly message: string }> {}

// The model's definitions were reviewed at a commit: what is computed from them is trusted.
const trustedBy = (
  source: SemanticQuery.ModelSource,
  kind: SemanticQuery.TrustedSource["kind"],
  name: string
): SemanticQuery.TrustedSource | undefined =>
  source.kind === "library" && source.path !== undefined && source.commit !== undefined
    ? { kind, name, path: source.path, commit: source.commit }
    : undefined

/**
 * Plans a request on the model governing `connector`, for `principal`: row filters by the caller's
 * client attributes, a derived model refused where raw SQL would be (nobody reviewed it), and trust
 * decided. Pure: the caller runs the statement.
 *
 * @since 0.1.0
 * @category utils
 */
export function plan(
  principal: Policy.Principal,
  connector: Connector.ConnectorRecord,
  governing: Governing,
  request: MetricsRequest
): Either.Either<MetricsPlan, PlanRefused | PlanInvalid>
export function plan(
  principal: Policy.Principal,
  connector: Connector.ConnectorRecord,
  governing: Governing,
  request: VerifiedRequest
): Either.Either<VerifiedPlan, PlanRefused | PlanInvalid>
export function plan(
  principal: Policy.Principal,
  connector: Connector.ConnectorRecord,
  governing: Governing,
  request: PlanRequest
): Either.Either<Plan, PlanRefused | PlanInvalid> {
  const options = { rowFilters: SemanticCompiler.rowFiltersFor(Policy.clientAttributesJson(principal)) }
  const invalid = (error: SemanticCompiler.CompileError) => new PlanInvalid({ message: error.message })
  if (request._tag === "Metrics") {
    // A derived model was reviewed by nobody: for a key whose client attributes the database does
    // not enforce, it is SQL written for the key like any other (a library model is the org's own).
    const refusal = governing.source.kind === "derived"
      ? connectorUse.rawSqlRefusal(principal, connector)
      : undefined
    if (refusal !== undefined) return Either.left(new PlanRefused({ reason: refusal }))
    return Either.map(
      Either.mapLeft(SemanticCompiler.compile(governing.model, request.query, governing.dialect, options), invalid),
      (compiled): MetricsPlan => ({
        _tag: "Metrics",
        sql: compiled.sql,
        params: compiled.params,
        compiled,
        // A list computes nothing a definition could vouch for.
        trusted: request.query.metrics.length === 0
          ? undefined
          : trustedBy(governing.source, "metric", request.query.metrics.join(", "))
      })
    )
  }
  // A derived model holds no verified query.
  const query = governing.source.kind === "library"
    ? governing.model.verifiedQueries.find((q) => q.name === request.name)
    : undefined
  if (query === undefined) {
    return Either.left(
      new PlanInvalid({
        message: `name: the semantic model of connector ${connector.id} has no verified query named ${request.name}`
      })
    )
  }
  return Either.map(
    Either.mapLeft(
      SemanticCompiler.verifiedSql(governing.model, query, request.params, governing.dialect, options),
      invalid
    ),
    (bound): VerifiedPlan => {
      const trusted = trustedBy(governing.source, "verified_query", query.name)
      // The values it ran with stay with it, so that the answer can be run again as it was (a pin).
      const given = Record.filter(
        request.params,
        (value): value is string | number | boolean => ["string", "number", "boolean"].includes(typeof value)
      )
      return {
        _tag: "Verified",
        sql: bound.sql,
        params: bound.params,
        query,
        trusted: trusted === undefined || Record.isEmptyRecord(given) ? trusted : { ...trusted, params: given }
      }
    }
  )
}

/**
 * The dialect of a connector's SQL.
 *
 * @since 0.1.0
 * @category utils
 */
export const dialectOf = (connector: Connector.ConnectorRecord): SemanticCompiler.DialectName =>
  connector.config.connector_type === "MYSQL"
    ? "mysql"
    : connector.config.connector_type === "FILES"
    ? "duckdb"
    : "postgres"

/**
 * A model file that does not read, with what it says it describes.
 *
 * @since 0.1.0
 * @category models
 */
export interface BrokenModel {
  readonly path: string
  readonly target: ReturnType<typeof SemanticModel.declaredTarget>
  readonly problems: ReadonlyArray<SemanticModel.Problem>
}

/**
 * The library's models, as read at one commit: each valid one, and the files that do not read.
 *
 * @since 0.1.0
 * @category models
 */
export interface LibraryModels {
  readonly models: ReadonlyArray<SemanticModel.SemanticModel>
  readonly broken: ReadonlyArray<BrokenModel>
}

/**
 * Reads every model file of a snapshot.
 *
 * @since 0.1.0
 * @category utils
 */
export const libraryModels = (files: LibraryDiff.Files): LibraryModels => {
  const models: Array<SemanticModel.SemanticModel> = []
  const broken: Array<BrokenModel> = []
  const paths = [...HashMap.keys(files)].filter(SemanticModel.isModelPath).sort()
  for (const path of paths) {
    const text = Utf8.decodeText(HashMap.unsafeGet(files, path))
    Either.match(SemanticModel.parse(path, text), {
      onLeft: (problems) => broken.push({ path, target: SemanticModel.declaredTarget(text), problems }),
      onRight: (model) => models.push(model)
    })
  }
  return { models, broken }
}

const governs = (
  target: { readonly connector?: string | undefined; readonly connector_type?: string | undefined },
  connector: Connector.ConnectorRecord,
  by: "name" | "type"
) =>
  by === "name"
    ? target.connector === connector.config.name
    : target.connector === undefined && target.connector_type === connector.config.connector_type

/**
 * The library model that governs a connector, if any: by its name first, then by its type. A file
 * that would govern it but does not read is returned as broken, never passed over for another.
 *
 * @since 0.1.0
 * @category utils
 */
export const governingModel = (
  read: LibraryModels,
  connector: Connector.ConnectorRecord
): SemanticModel.SemanticModel | BrokenModel | undefined => {
  for (const by of ["name", "type"] as const) {
    const found = [
      ...read.models.map((model) => ({ path: model.path, found: model, target: model.file })),
      ...read.broken.map((file) => ({ path: file.path, found: file, target: file.target }))
    ].filter((candidate) => governs(candidate.target, connector, by))
      .sort((a, b) => (a.path < b.path ? -1 : 1))[0]
    if (found !== undefined) return found.found
  }
  return undefined
}

// Parsing a model costs milliseconds and main changes rarely: keep the last commits' models.
const cacheSize = 64

/**
 * Builds the semantic layer over the library, the connectors and their runtime in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const library = yield* Library
  const connectors = yield* Connectors
  const runtime = yield* ConnectorRuntime.ConnectorRuntime
  const cache = new Map<string, LibraryModels>()

  // Commits never change, so the models read at one are kept by its id.
  const cached = <E>(
    organizationId: OrganizationId,
    head: string,
    files: Effect.Effect<LibraryDiff.Files, E>
  ): Effect.Effect<{ readonly head: string | undefined; readonly read: LibraryModels }, E> =>
    Effect.suspend(() => {
      const key = `${organizationId}:${head}`
      const read = cache.get(key)
      if (read !== undefined) {
        cache.delete(key)
        cache.set(key, read)
        return Effect.succeed({ head, read })
      }
      return Effect.map(files, (files) => {
        const read = libraryModels(files)
        if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!)
        cache.set(key, read)
        return { head, read }
      })
    })

  const modelsOf = (organizationId: OrganizationId) =>
    Effect.flatMap(library.main(organizationId), (main) => {
      const head = Option.getOrUndefined(main.head)
      return head === undefined
        ? Effect.succeed({ head: undefined, read: libraryModels(main.files) })
        : cached(organizationId, head, Effect.succeed(main.files))
    })

  const modelsAt = (organizationId: OrganizationId, at: string) =>
    Effect.mapError(
      cached(organizationId, at, library.at(organizationId, at)),
      () => new InvalidRequest({ message: `${at} is not a commit of the library` })
    )

  /** The model that governs a connector, among the library's models read at `head`. */
  const governingOf = Effect.fnUntraced(function*(
    head: string | undefined,
    read: LibraryModels,
    connector: Connector.ConnectorRecord
  ) {
    const dialect = dialectOf(connector)
    const found = governingModel(read, connector)
    if (found !== undefined && "problems" in found) {
      return yield* new InvalidRequest({
        message: `the semantic model of connector ${connector.id} does not read: ${
          found.problems.map(SemanticModel.formatProblem).join("; ")
        }`
      })
    }
    if (found !== undefined) {
      return {
        model: found,
        dialect,
        source: {
          kind: "library" as const,
          model: found.file.name,
          path: found.path,
          ...(head === undefined ? {} : { commit: head })
        }
      }
    }
    const schema = yield* Effect.mapError(
      runtime.introspect(connector),
      (error) =>
        new InvalidRequest({ message: `could not read the schema of connector ${connector.id}: ${error.message}` })
    )
    const file = DerivedModel.derive(connector.config.name, schema)
    if (file === undefined) {
      return yield* new InvalidRequest({ message: `connector ${connector.id} has no tables to derive a model from` })
    }
    const model = yield* Either.mapLeft(
      SemanticModel.validate(`connector ${connector.id} (derived)`, file),
      (problems) => new InvalidRequest({ message: problems.map(SemanticModel.formatProblem).join("; ") })
    )
    return { model, dialect, source: { kind: "derived" as const, model: file.name } }
  })

  const modelFor = Traced.fn("SemanticLayer.modelFor")(function*(
    principal: Policy.Principal,
    connector: Connector.ConnectorRecord
  ) {
    const { head, read } = yield* modelsOf(principal.organizationId)
    return yield* governingOf(head, read, connector)
  })

  const modelsFor = Traced.fn("SemanticLayer.modelsFor")(function*(
    principal: Policy.Principal,
    records: ReadonlyArray<Connector.ConnectorRecord>,
    at?: string | undefined
  ) {
    // The library is read once for all of them.
    const models = yield* Effect.either(
      at === undefined ? modelsOf(principal.organizationId) : modelsAt(principal.organizationId, at)
    )
    if (Either.isLeft(models)) return records.map(() => Either.left(models.left))
    const { head, read } = models.right
    return yield* Effect.forEach(records, (connector) => Effect.either(governingOf(head, read, connector)))
  })

  const usable = (principal: Policy.Principal, id: Connector.ConnectorRecord["id"]) =>
    Effect.map(connectors.resolveForUse(principal, [id]), (records) => records[0]!)

  const modelFile = Traced.fn("SemanticLayer.modelFile")(function*(
    principal: Policy.Principal,
    connectorId: Connector.ConnectorRecord["id"]
  ) {
    const governing = yield* modelFor(principal, yield* usable(principal, connectorId))
    return { file: governing.model.file, source: governing.source }
  })

  // The connector a query names: one the caller may not use is the request's mistake, named.
  const queried = (principal: Policy.Principal, id: Connector.ConnectorRecord["id"]) =>
    Effect.catchTag(
      usable(principal, id),
      "NotFound",
      () => new InvalidRequest({ message: connectorUse.unusableMessage("connector_id", [id]) })
    )

  // A plan's failure as the API answers it.
  const asApi = (error: PlanRefused | PlanInvalid) =>
    error._tag === "PlanRefused"
      ? new PermissionDenied({ message: `permission denied: ${error.reason}` })
      : new InvalidRequest({ message: error.message })

  const compileFor = (principal: Policy.Principal, request: SemanticQuery.SemanticQueryRequest) =>
    Effect.gen(function*() {
      const connector = yield* queried(principal, request.connector_id)
      const governing = yield* modelFor(principal, connector)
      const { connector_id: _, ...query } = request
      const metrics = yield* Either.mapLeft(plan(principal, connector, governing, { _tag: "Metrics", query }), asApi)
      return { connector, governing, compiled: metrics.compiled }
    })

  const runWindow = (
    connector: Connector.ConnectorRecord,
    request: ConnectorRuntime.QueryRequest,
    window: ConnectorRuntime.Window | undefined
  ) =>
    Effect.mapError(
      ConnectorRuntime.queryWindow(runtime, connector, request, window),
      (error) => new InvalidRequest({ message: `query failed: ${error.message}` })
    )

  const describe = (
    compiled: SemanticCompiler.Compiled,
    governing: Governing
  ): SemanticQuery.CompiledQuery => ({
    sql: compiled.sql,
    params: compiled.params,
    dialect: governing.dialect,
    columns: compiled.columns.map((c) => ({
      name: c.name,
      kind: c.kind,
      ...(c.format === undefined ? {} : { format: c.format }),
      ...(c.unit === undefined ? {} : { unit: c.unit })
    })),
    reading: compiled.reading,
    source: governing.source
  })

  const compile = Traced.fn("SemanticLayer.compile")(function*(
    principal: Policy.Principal,
    request: SemanticQuery.SemanticQueryRequest
  ) {
    const { compiled, governing } = yield* compileFor(principal, request)
    return describe(compiled, governing)
  })

  const query = Traced.fn("SemanticLayer.query")(function*(
    principal: Policy.Principal,
    request: SemanticQuery.SemanticQueryRequest,
    window?: ConnectorRuntime.Window
  ) {
    const { compiled, connector, governing } = yield* compileFor(principal, request)
    const result = yield* runWindow(connector, {
      sql: compiled.sql,
      params: compiled.params,
      clientAttributesJson: Policy.clientAttributesJson(principal),
      maxRows: request.limit ?? ConnectorRuntime.defaultMaxRows,
      timeoutMillis: ConnectorRuntime.defaultTimeoutMillis
    }, window)
    return { ...describe(compiled, governing), rows: result.rows, truncated: result.truncated }
  })

  const runVerified = Traced.fn("SemanticLayer.runVerified")(function*(
    principal: Policy.Principal,
    request: SemanticQuery.VerifiedQueryRequest,
    window?: ConnectorRuntime.Window
  ) {
    const connector = yield* queried(principal, request.connector_id)
    const governing = yield* modelFor(principal, connector)
    const bound = yield* Either.mapLeft(
      plan(principal, connector, governing, { _tag: "Verified", name: request.name, params: request.params ?? {} }),
      asApi
    )
    // The API answers only trusted verified queries: one of a library read at no commit is none.
    if (bound.trusted === undefined) {
      return yield* new InvalidRequest({
        message: `name: the semantic model of connector ${connector.id} has no verified query named ${request.name}`
      })
    }
    const query = bound.query
    const result = yield* runWindow(connector, {
      sql: bound.sql,
      params: bound.params,
      clientAttributesJson: Policy.clientAttributesJson(principal),
      maxRows: request.limit ?? ConnectorRuntime.defaultMaxRows,
      timeoutMillis: ConnectorRuntime.defaultTimeoutMillis
    }, window)
    return {
      question: query.question,
      sql: bound.sql,
      params: bound.params,
      dialect: governing.dialect,
      columns: result.columns.map((column) => ({ name: column.name, type: column.type })),
      rows: result.rows,
      truncated: result.truncated,
      trusted: bound.trusted
    }
  })

  return SemanticLayer.of({ modelFor, modelsFor, modelFile, compile, query, runVerified })
})

/**
 * The semantic layer over the ports and use cases in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  SemanticLayer,
  never,
  Library | Connectors | ConnectorRuntime.ConnectorRuntime
> = Layer.effect(SemanticLayer, make)

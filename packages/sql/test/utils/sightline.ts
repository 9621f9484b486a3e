/**
 * Core's use cases over the real SQL store, wired as a host wires them: the store of the test
 * harness (`databases.ts`, PGlite or PostgreSQL) provides every repository port, core's in-process
 * layers provide the other ports (real secrets and UUIDs, the test model catalogue, memory rate
 * limiter, delivery, sandbox runtime and connector tester), and the use-case services run on top.
 *
 * Two hooks let a test break the wiring on purpose:
 * - `adapt` rewrites the store's services before the use cases see them, so a test can make one
 *   step of a use case crash or hang (for example an `AuditLogRepo` whose `append` dies after
 *   writing) and then check that nothing of the operation reached the database;
 * - `SIGHTLINE_E2E_MUTANT` (comma-separated names of `mutants`) swaps a guarantee of the store
 *   for a broken one in every layer built here. It exists to check that the tests of
 *   `UseCasesSql.test.ts` can fail: run them with a mutant and the tests it names must fail.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ApiKeyRepo } from "@sightline/core/ApiKeyRepo"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auditor from "@sightline/core/Auditor"
import * as Auth from "@sightline/core/Auth"
import { ChangeRepo } from "@sightline/core/ChangeRepo"
import * as Changes from "@sightline/core/Changes"
import * as ConnectorTester from "@sightline/core/ConnectorTester"
import * as Delivery from "@sightline/core/Delivery"
import * as Library from "@sightline/core/Library"
import * as Members from "@sightline/core/Members"
import * as Model from "@sightline/core/Model"
import * as Organizations from "@sightline/core/Organizations"
import * as OutboundEvents from "@sightline/core/OutboundEvents"
import * as PasswordHasher from "@sightline/core/PasswordHasher"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Roles from "@sightline/core/Roles"
import * as SandboxRuntime from "@sightline/core/SandboxRuntime"
import { Transaction } from "@sightline/core/Transaction"
import * as CoreUseCases from "@sightline/core/UseCases"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TablePrefix } from "../../src/TablePrefix.js"
import type { StoreServices } from "./databases.js"

/** The ports that are not repositories, as in production but in-process. */
export const platform = Layer.mergeAll(
  CoreUseCases.layerCorePorts,
  PasswordHasher.layerTest,
  Model.layerTest,
  RateLimiter.layerMemory,
  Delivery.layerMemory,
  SandboxRuntime.layerMemory,
  ConnectorTester.layerMemory
)

/** A rewrite of the store's services (see the module documentation). */
export type Adapt = (services: Context.Context<StoreServices>) => Context.Context<StoreServices>

/** Replaces one service of the store by a version built from the real one. */
export const replace = <I extends StoreServices, S>(
  tag: Context.Tag<I, S>,
  f: (real: S, services: Context.Context<StoreServices>) => S
): Adapt =>
(services) => Context.add(services, tag, f(Context.get(services, tag), services))

/** Applies several rewrites, left to right. */
export const adaptAll = (...adapts: ReadonlyArray<Adapt>): Adapt => (services) =>
  adapts.reduce((current, adapt) => adapt(current), services)

/**
 * Deliberately broken stores, each removing one guarantee the use cases rely on. Only for checking
 * that the tests can fail (see `SIGHTLINE_E2E_MUTANT`); never used otherwise.
 */
export const mutants = {
  /** `withTransaction` runs its effect as is: every statement commits on its own. */
  "no-transaction": replace(Transaction, () => Transaction.of({ withTransaction: (effect) => effect })),
  /** `...ForUpdate` reads take no row lock: concurrent callers no longer queue up. */
  "no-row-lock": adaptAll(
    replace(ChangeRepo, (real) => ChangeRepo.of({ ...real, getForUpdate: real.get })),
    replace(ApiKeyRepo, (real) => ApiKeyRepo.of({ ...real, getForUpdate: real.get }))
  ),
  /** Change numbers read as `max(number) + 1` without locking anything (the classic race). */
  "unlocked-numbers": replace(ChangeRepo, (real, services) => {
    const sql = Context.get(services, SqlClient.SqlClient).withoutTransforms()
    const changes = sql(Context.get(services, TablePrefix).name("changes"))
    return ChangeRepo.of({
      ...real,
      nextNumber: (organizationId) =>
        sql<{ readonly next: number }>`
          SELECT (coalesce(max(number), 0) + 1)::int AS next FROM ${changes}
          WHERE organization_id = ${organizationId}`.pipe(
          Effect.map((rows) => rows[0].next),
          Effect.orDie
        )
    })
  }),
  /** Approvals inserted without `ON CONFLICT DO NOTHING`: a repeated approval is no longer a no-op. */
  "plain-approval-insert": replace(ChangeRepo, (real, services) => {
    const sql = Context.get(services, SqlClient.SqlClient).withoutTransforms()
    const approvals = sql(Context.get(services, TablePrefix).name("change_approvals"))
    return ChangeRepo.of({
      ...real,
      addApproval: (approval) =>
        sql`INSERT INTO ${approvals} ${
          sql.insert({
            organization_id: approval.organization_id,
            change_id: approval.change_id,
            revision: approval.revision,
            approver_id: approval.approver_id,
            created_at: DateTime.toDate(approval.created_at)
          })
        }`.pipe(Effect.as({ alreadyApproved: false }), Effect.orDie)
    })
  }),
  /** Authentication remembers the credential it found for a hash forever (a stale credential cache). */
  "auth-cache": replace(ApiKeyRepo, (real) => {
    const cache = new Map<string, Option.Option<ApiKeyRepo.Credential>>()
    return ApiKeyRepo.of({
      ...real,
      findCredential: (hash) =>
        cache.has(hash)
          ? Effect.succeed(cache.get(hash)!)
          : Effect.tap(real.findCredential(hash), (found) => Effect.sync(() => cache.set(hash, found)))
    })
  })
} satisfies Record<string, Adapt>

/** The mutants named by `SIGHTLINE_E2E_MUTANT` (none normally). */
export const activeMutants: ReadonlyArray<keyof typeof mutants> = Schema.decodeUnknownSync(
  Schema.Array(Schema.Literal(...(Object.keys(mutants) as Array<keyof typeof mutants>)))
)((process.env.SIGHTLINE_E2E_MUTANT ?? "").split(",").map((name) => name.trim()).filter((name) => name !== ""))

/** The use-case services this layer provides. */
export type UseCases =
  | Organizations.Organizations
  | Roles.Roles
  | Members.Members
  | ApiKeys.ApiKeys
  | Auth.Auth
  | Library.Library
  | Changes.Changes

/** Everything a test gets: the use cases, the (adapted) store with its client and prefix, the platform ports. */
export type Services = UseCases | StoreServices | Layer.Layer.Success<typeof platform>

/** The use cases over `store` (a store of `TestDatabase`, shared or under a fresh prefix). */
export const layer = (
  store: Layer.Layer<StoreServices, unknown>,
  options: { readonly adapt?: Adapt } = {}
): Layer.Layer<Services, unknown> => {
  const rewrites = [...(options.adapt === undefined ? [] : [options.adapt]), ...activeMutants.map((m) => mutants[m])]
  const ports = rewrites.length === 0
    ? store
    : Layer.effectContext(Effect.map(Effect.context<StoreServices>(), adaptAll(...rewrites))).pipe(
      Layer.provide(store)
    )
  return Layer.mergeAll(
    Organizations.layer,
    Roles.layer,
    Members.layer,
    ApiKeys.layer,
    Changes.layer
  ).pipe(
    Layer.provideMerge(Library.layer),
    Layer.provideMerge(Layer.mergeAll(Auth.layer, Auditor.layer, OutboundEvents.layer)),
    Layer.provideMerge(Layer.merge(ports, platform))
  )
}

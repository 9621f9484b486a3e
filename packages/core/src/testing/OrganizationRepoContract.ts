/**
 * The contract every `OrganizationRepo` implementation satisfies.
 *
 * Organizations are global (not scoped by another organization), so the suite only ever looks at
 * the rows it created itself: it passes on a shared store that already holds organizations.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { OrganizationId } from "../Ids.js"
import { Organization } from "../Organization.js"
import { OrganizationRepo } from "../OrganizationRepo.js"
import * as OrganizationSettings from "../OrganizationSettings.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const organization = (name: string, createdAt: DateTime.Utc, id = Fixtures.uuid()) =>
  new Organization({ id: OrganizationId.make(id), name, created_at: createdAt })

/**
 * The services the suite needs from the layer under test.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = OrganizationRepo | Transaction

/**
 * Registers the `OrganizationRepo` contract suite.
 *
 * @since 0.1.0
 * @category utils
 */
export const organizationRepoContract = (
  name: string,
  layer: Layer.Layer<Requirements, unknown>
): void => {
  describe(`OrganizationRepo contract: ${name}`, () => {
    it.effect("round-trips every field, the timestamp to the millisecond", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const org = organization("Acme Analytics", at("2024-03-05T06:07:08.123Z"))
        yield* repo.create(org)
        expect(yield* repo.get(org.id)).toEqual(Option.some(org))
      }).pipe(Effect.provide(layer)))

    it.effect("finds nothing for an unknown id", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        expect(yield* repo.get(OrganizationId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists organizations oldest first, ties broken by id", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const [low, high] = [Fixtures.uuid(), Fixtures.uuid()].sort()
        const later = organization("Later", at("2024-01-02T00:00:00.000Z"))
        const tieHigh = organization("Tie high", at("2024-01-01T00:00:00.000Z"), high)
        const tieLow = organization("Tie low", at("2024-01-01T00:00:00.000Z"), low)
        for (const org of [later, tieHigh, tieLow]) yield* repo.create(org)
        const mine = new Set([later.id, tieHigh.id, tieLow.id])
        const listed = (yield* repo.list).filter((org) => mine.has(org.id))
        expect(listed).toEqual([tieLow, tieHigh, later])
      }).pipe(Effect.provide(layer)))

    it.effect("reads settings as their defaults until changed, and changes only those given", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const org = organization("Settings", at("2024-01-01T00:00:00.000Z"))
        const other = organization("Other settings", at("2024-01-01T00:00:00.000Z"))
        yield* repo.create(org)
        yield* repo.create(other)
        expect(yield* repo.settings(org.id)).toEqual(OrganizationSettings.defaults)
        const off = { ...OrganizationSettings.defaults, mcp_run_sql: false }
        expect(yield* repo.updateSettings(org.id, { mcp_run_sql: false })).toEqual(off)
        expect(yield* repo.settings(org.id)).toEqual(off)
        // An empty change keeps what was set; another organization keeps its own.
        expect(yield* repo.updateSettings(org.id, {})).toEqual(off)
        expect(yield* repo.settings(other.id)).toEqual(OrganizationSettings.defaults)
        const origins = ["https://app.example.com"]
        expect(yield* repo.updateSettings(org.id, { embed_origins: origins })).toEqual({
          ...off,
          embed_origins: origins
        })
        expect(yield* repo.updateSettings(org.id, { embed_origins: [] })).toEqual(off)
        // Concurrent changes all land, the last one wins for the same setting.
        yield* Effect.all(
          [repo.updateSettings(org.id, { mcp_run_sql: true }), repo.updateSettings(other.id, { mcp_run_sql: false })],
          { concurrency: "unbounded" }
        )
        expect(yield* repo.settings(org.id)).toEqual(OrganizationSettings.defaults)
        expect(yield* repo.settings(other.id)).toEqual(off)
        // A change inside a failed transaction is undone.
        yield* Effect.exit(withTransaction(
          Effect.zipRight(repo.updateSettings(org.id, { mcp_run_sql: false }), Effect.fail("boom" as const))
        ))
        expect(yield* repo.settings(org.id)).toEqual(OrganizationSettings.defaults)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps nothing of a failed transaction", () =>
      Effect.gen(function*() {
        const repo = yield* OrganizationRepo
        const org = organization("Rolled back", at("2024-01-01T00:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(
          Effect.zipRight(repo.create(org), Effect.fail("boom" as const))
        ))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id)).toEqual(Option.none())
        expect((yield* repo.list).some((listed) => listed.id === org.id)).toBe(false)
      }).pipe(Effect.provide(layer)))
  })
}

/**
 * The contract every `AppRepo` implementation satisfies.
 *
 * Every test creates its own organizations and members, so the suite runs on a shared, non-empty
 * database. Rows are compared through their encoded form, so a timestamp, the files map or an
 * optional field that does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as App from "../App.js"
import { AppRepo } from "../AppRepo.js"
import { AppId, ChatId, ConnectorId, type MemberId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encodeSync = Schema.encodeSync(App.App)
const encode = (app: App.App) => encodeSync(app)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const make = (organizationId: OrganizationId, ownerId: MemberId, createdAt: DateTime.Utc) =>
  App.make({
    id: AppId.make(Fixtures.uuid()),
    organizationId,
    ownerId,
    request: { name: "Revenue board", code: "import streamlit as st" },
    at: createdAt
  })

const setup = Effect.gen(function*() {
  const repo = yield* AppRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  return { repo, org, member, other }
})

/**
 * Registers the `AppRepo` contract suite. The layer must also provide `OrganizationRepo` and
 * `MemberRepo` (apps reference their owner) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const appRepoContract = (
  name: string,
  layer: Layer.Layer<AppRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`AppRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with optional fields set or absent", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const full = new App.App({
          id: AppId.make(Fixtures.uuid()),
          organization_id: org.id,
          owner_id: member.id,
          name: "Churn explorer",
          description: "Explore churn by cohort — *Markdown*",
          code: "import pandas as pd\nprint('é😀')\n",
          files: { "app.py": "print(1)\n", "data/cohorts.csv": "a,b\n1,2\n", "empty.txt": "" },
          data_sources: [ConnectorId.make(2), ConnectorId.make(1)],
          chat_id: ChatId.make(Fixtures.uuid()),
          created_at: at("2026-03-01T10:00:00.123Z"),
          updated_at: at("2026-03-02T11:00:00.456Z")
        })
        const minimal = make(org.id, member.id, at("2026-03-01T12:00:00.789Z"))
        yield* repo.create(full)
        yield* repo.create(minimal)
        for (const app of [full, minimal]) {
          expect(Option.map(yield* repo.get(org.id, app.id), encode)).toEqual(Option.some(encode(app)))
        }
        expect(yield* repo.get(org.id, AppId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a second app with the same id", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const app = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(app)
        expect((yield* Effect.flip(repo.create(new App.App({ ...app, name: "Other" }))))._tag).toBe("Conflict")
        expect(Option.map(yield* repo.get(org.id, app.id), encode)).toEqual(Option.some(encode(app)))
      }).pipe(Effect.provide(layer)))

    it.effect("lists the organization's apps newest first, ties broken by id", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const oldest = make(org.id, member.id, at("2026-03-01T09:00:00.000Z"))
        const tiedA = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const tiedB = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const newest = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        for (const app of [tiedA, oldest, newest, tiedB]) yield* repo.create(app)
        const tied = [tiedA.id, tiedB.id].sort().reverse()
        expect((yield* repo.list(org.id)).map((a) => a.id)).toEqual([newest.id, ...tied, oldest.id])
      }).pipe(Effect.provide(layer)))

    it.effect("delete removes the app once", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const app = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const kept = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        yield* repo.create(app)
        yield* repo.create(kept)
        expect(yield* repo.delete(org.id, app.id)).toBe(true)
        expect(yield* repo.get(org.id, app.id)).toEqual(Option.none())
        expect(yield* repo.delete(org.id, app.id)).toBe(false)
        expect((yield* repo.list(org.id)).map((a) => a.id)).toEqual([kept.id])
      }).pipe(Effect.provide(layer)))

    it.effect("an app of one organization is invisible to every method called for another", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const app = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(app)
        expect(yield* repo.get(other.id, app.id)).toEqual(Option.none())
        expect(yield* repo.list(other.id)).toEqual([])
        expect(yield* repo.delete(other.id, app.id)).toBe(false)
        expect(Option.map(yield* repo.get(org.id, app.id), encode)).toEqual(Option.some(encode(app)))
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no create or delete behind", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const kept = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(kept)
        const discarded = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(discarded)
          expect(yield* repo.delete(org.id, kept.id)).toBe(true)
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.id)).toEqual(Option.none())
        expect(Option.map(yield* repo.get(org.id, kept.id), encode)).toEqual(Option.some(encode(kept)))
      }).pipe(Effect.provide(layer)))
  })
}

/**
 * What the RoleRepo contract cannot show: role names stay unique per organization when many callers
 * race, on a real PostgreSQL (a pool of connections, so the inserts really overlap) and on PGlite.
 */
import { describe, expect, it } from "@effect/vitest"
import { Conflict } from "@sightline/core/Errors"
import { type OrganizationId, RoleId } from "@sightline/core/Ids"
import * as Role from "@sightline/core/Role"
import { RoleRepo } from "@sightline/core/RoleRepo"
import { Fixtures } from "@sightline/core/testing"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { forEachDatabase } from "./utils/databases.js"

const at = DateTime.unsafeMake("2024-01-01T00:00:00.000Z")

const roleNamed = (organizationId: OrganizationId, name: string) =>
  Role.make({ id: RoleId.make(Fixtures.uuid()), organizationId, request: { name }, now: at })

// Every spelling differs only by case, so that a check done in the application with `===` would let
// them all through; only the case-insensitive unique index stops them.
const spellings = ["Analysts", "ANALYSTS", "analysts", "aNALYSTS", "AnAlYsTs", "analystS", "ANALysts", "Analysts"]

forEachDatabase((database) =>
  describe(`RoleRepoSql (${database.name})`, () => {
    it.live("concurrent creates of one name in any case: exactly one succeeds, the others are Conflicts", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const exits = yield* Effect.all(
          [
            ...spellings.map((name) => Effect.exit(repo.create(roleNamed(org.id, name)))),
            // The same name in another organization is no clash.
            Effect.exit(repo.create(roleNamed(other.id, "Analysts")))
          ],
          { concurrency: "unbounded" }
        )
        const mine = exits.slice(0, spellings.length)
        expect(mine.filter(Exit.isSuccess)).toHaveLength(1)
        for (const exit of mine.filter(Exit.isFailure)) expect(exit).toEqual(Exit.fail(expect.any(Conflict)))
        expect(Exit.isSuccess(exits[spellings.length]!)).toBe(true)
        expect((yield* repo.list(org.id)).map((role) => role.name.toLowerCase())).toEqual(["analysts"])
      }).pipe(Effect.provide(database.shared)))

    it.live("concurrent renames to one name: exactly one succeeds, the others keep their names", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const roles = Arr.makeBy(6, (i) => roleNamed(org.id, `role ${i}`))
        yield* Effect.forEach(roles, repo.create, { discard: true })
        const exits = yield* Effect.all(
          roles.map((role, i) =>
            Effect.exit(repo.update(new Role.RoleRecord({ ...role, name: spellings[i]!, updated_at: at })))
          ),
          { concurrency: "unbounded" }
        )
        expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
        for (const exit of exits.filter(Exit.isFailure)) expect(exit).toEqual(Exit.fail(expect.any(Conflict)))
        const names = (yield* repo.list(org.id)).map((role) => role.name)
        expect(names.filter((name) => name.toLowerCase() === "analysts")).toHaveLength(1)
        expect(names.filter((name) => name.startsWith("role "))).toHaveLength(5)
      }).pipe(Effect.provide(database.shared)))
  })
)

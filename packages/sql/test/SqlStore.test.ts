import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { MemberRepo } from "@sightline/core/MemberRepo"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SqlStore from "../src/SqlStore.js"
import { forEachDatabase, postgresUrl } from "./utils/databases.js"

const roundTrip = Effect.gen(function*() {
  const org = yield* withTransaction(Fixtures.organization("Store"))
  const member = yield* Fixtures.member(org.id)
  return {
    org: yield* (yield* OrganizationRepo).get(org.id),
    member: yield* (yield* MemberRepo).get(org.id, member.id),
    expected: { org, member }
  }
})

describe("SqlStore", () => {
  it.effect("fails to build with an invalid prefix", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(roundTrip, SqlStore.layerPglite({ prefix: "Not Valid" })))
      expect(error).toBeInstanceOf(Cause.IllegalArgumentException)
    }))

  forEachDatabase((database) => {
    if (database.name !== "postgres") return
    it.effect("layerPostgres migrates and provides every port in one layer", () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const { expected, member, org } = yield* Effect.provide(
          roundTrip,
          SqlStore.layerPostgres({ url: postgresUrl, prefix })
        )
        expect(org).toEqual(Option.some(expected.org))
        expect(member).toEqual(Option.some(expected.member))
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT id FROM ${sql(`${prefix}organizations`)}`).toEqual([{ id: expected.org.id }])
      }).pipe(Effect.provide(database.client)))
  })
})

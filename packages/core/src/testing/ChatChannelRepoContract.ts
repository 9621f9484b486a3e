/**
 * The contract every `ChatChannelRepo` implementation must satisfy.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ChatChannelRecord } from "../ChatChannel.js"
import { ChatChannelRepo } from "../ChatChannelRepo.js"
import { ChatChannelId, type MemberId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import type { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const channel = (organizationId: OrganizationId, createdBy: MemberId, name: string, at: string) =>
  new ChatChannelRecord({
    id: ChatChannelId.make(Fixtures.uuid()),
    organization_id: organizationId,
    name,
    webhook_url: `https://hooks.example.com/services/${Fixtures.uuid()}`,
    created_by: createdBy,
    created_at: DateTime.unsafeMake(at)
  })

/**
 * Registers the `ChatChannelRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const chatChannelRepoContract = (
  name: string,
  layer: Layer.Layer<ChatChannelRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`ChatChannelRepo contract: ${name}`, () => {
    it.effect("stores, lists oldest first, finds and deletes channels of their own organization only", () =>
      Effect.gen(function*() {
        const repo = yield* ChatChannelRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const other = yield* Fixtures.organization()
        const stranger = yield* Fixtures.member(other.id)
        const later = channel(org.id, member.id, "#later", "2026-05-02T00:00:00.000Z")
        const first = channel(org.id, member.id, "#first", "2026-05-01T00:00:00.000Z")
        const foreign = channel(other.id, stranger.id, "#theirs", "2026-05-01T00:00:00.000Z")
        for (const c of [later, first, foreign]) yield* repo.create(c)
        expect((yield* Effect.flip(repo.create(first)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, first.id)).toEqual(Option.some(first))
        expect(yield* repo.get(other.id, first.id)).toEqual(Option.none())
        expect((yield* repo.list(org.id)).map((c) => c.name)).toEqual(["#first", "#later"])
        expect(yield* repo.delete(other.id, first.id)).toBe(false)
        expect(yield* repo.delete(org.id, first.id)).toBe(true)
        expect(yield* repo.delete(org.id, first.id)).toBe(false)
        expect((yield* repo.list(org.id)).map((c) => c.name)).toEqual(["#later"])
        expect((yield* repo.list(other.id)).map((c) => c.name)).toEqual(["#theirs"])
      }).pipe(Effect.provide(layer)))
  })
}

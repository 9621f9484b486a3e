/**
 * The member repository port: members and their role assignments.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Conflict } from "./Errors.js"
import type { MemberId, OrganizationId } from "./Ids.js"
import type { Member } from "./Member.js"
import { MemoryState } from "./Transaction.js"

/** Stores members. */
export class MemberRepo extends Context.Tag("@sightline/core/MemberRepo")<MemberRepo, MemberRepo.Service>() {}

export declare namespace MemberRepo {
  /** Member storage. E-mail addresses are unique per organization (case-insensitive). */
  export interface Service {
    readonly create: (member: Member) => Effect.Effect<void, Conflict>
    /** A member of the organization, soft-deleted ones included (callers check `deleted_at`). */
    readonly get: (organizationId: OrganizationId, id: MemberId) => Effect.Effect<Option.Option<Member>>
    readonly findByEmail: (organizationId: OrganizationId, email: string) => Effect.Effect<Option.Option<Member>>
  }
}

/** Members in memory. */
export const layerMemory: Layer.Layer<MemberRepo, never, MemoryState> = Layer.effect(
  MemberRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<MemberId, Member>())
    const inOrg = (organizationId: OrganizationId) => (member: Member) => member.organization_id === organizationId
    const findByEmail = (organizationId: OrganizationId, email: string) =>
      Effect.map(Ref.get(table), (rows) =>
        Option.fromNullable(
          Array.from(HashMap.values(rows)).find((m) =>
            m.organization_id === organizationId && m.email.toLowerCase() === email.toLowerCase())
        ))
    return {
      create: (member) =>
        state.run(Effect.gen(function*() {
          if (Option.isSome(yield* findByEmail(member.organization_id, member.email))) {
            return yield* new Conflict({ message: `a member with e-mail ${member.email} already exists` })
          }
          yield* Ref.update(table, HashMap.set(member.id, member))
        })),
      get: (organizationId, id) =>
        state.run(Effect.map(Ref.get(table), (rows) => HashMap.get(rows, id).pipe(Option.filter(inOrg(organizationId))))),
      findByEmail: (organizationId, email) => state.run(findByEmail(organizationId, email))
    }
  })
)

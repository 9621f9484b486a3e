/**
 * The audit trail as a service: use cases yield `Auditor` and record what they did, inside the
 * transaction of the write they describe, without capturing the repository's context themselves.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AuditLog from "./AuditLog.js"
import { AuditLogRepo } from "./AuditLogRepo.js"
import { IdGenerator, uuid } from "./IdGenerator.js"
import { AuditLogEntryId } from "./Ids.js"
import type * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * Records audit entries.
 *
 * @since 0.1.0
 * @category services
 */
export class Auditor extends Context.Tag("@sightline/core/Auditor")<Auditor, Auditor.Service>() {}

export declare namespace Auditor {
  /** An entry without its actor: `recordBy` takes the actor from the principal. */
  export type Entry = Omit<AuditLog.RecordInput, "organizationId" | "actorId" | "authMethod">

  /** Appending entries; call inside the transaction of the write an entry describes. */
  export interface Service {
    /** Appends an entry as given (for `system` actions that no member started). */
    readonly record: (input: AuditLog.RecordInput) => Effect.Effect<AuditLog.AuditLogRecord>
    /** Appends an entry for an action the principal took, in its organization and with its auth method. */
    readonly recordBy: (principal: Policy.Principal, entry: Entry) => Effect.Effect<AuditLog.AuditLogRecord>
  }
}

/**
 * Appends an entry for an action, stamped with a new id and the current time. Details that look like
 * secrets are a defect (the record's schema refuses them).
 */
const append = Traced.fn("Auditor.append")(function*(input: AuditLog.RecordInput) {
  const repo = yield* AuditLogRepo
  const entry = new AuditLog.AuditLogRecord({
    id: AuditLogEntryId.make(yield* uuid),
    organization_id: input.organizationId,
    ...(input.actorId === undefined ? {} : { actor_id: input.actorId }),
    action: input.action,
    resource_type: input.resourceType,
    resource_id: input.resourceId,
    details: input.details ?? {},
    auth_method: input.authMethod,
    created_at: yield* DateTime.now
  })
  yield* repo.append(entry)
  return entry
})

/**
 * Builds the service over the `AuditLogRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Auditor.Service, never, AuditLogRepo | IdGenerator> = Effect.map(
  Effect.context<AuditLogRepo | IdGenerator>(),
  (all) => {
    // Only these two: the context is merged into the caller's on every record.
    const context = Context.pick(AuditLogRepo, IdGenerator)(all)
    const record = (input: AuditLog.RecordInput) => Effect.provide(append(input), context)
    return Auditor.of({
      record,
      recordBy: (principal, entry) => record({ ...entry, ...AuditLog.actorOf(principal) })
    })
  }
)

/**
 * The auditor over the `AuditLogRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Auditor, never, AuditLogRepo | IdGenerator> = Layer.effect(Auditor, make)

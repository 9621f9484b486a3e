/**
 * Seeding people for the server tests, through core's use cases on the server's own store.
 */
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import { RoleId } from "@sightline/core/Ids"
import * as Members from "@sightline/core/Members"
import type * as Permission from "@sightline/core/Permission"
import * as Roles from "@sightline/core/Roles"
import { Fixtures } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import type { Org, TestServer } from "./server.js"

/** A new member (system role `member`) of the organization, with a personal key holding all its roles. */
export const newMember = (server: TestServer, org: Org) => server.run(Fixtures.memberWithKey(org.key))

/**
 * A key of the organization's admin scoped to a new custom role that grants only `permissions`: what
 * an embedding host mints for a narrow integration.
 */
export const scopedKey = (server: TestServer, org: Org, permissions: ReadonlyArray<Permission.Permission>) =>
  server.run(Effect.gen(function*() {
    const auth = yield* Auth.Auth
    const admin = yield* auth.authenticateApiKey(org.key)
    const role = yield* (yield* Roles.Roles).create(admin, {
      name: `scoped-${crypto.randomUUID().slice(0, 8)}`,
      permissions: [...permissions]
    })
    yield* (yield* Members.Members).assignRole(admin, admin.memberId, { roleId: RoleId.make(role.id) })
    // A session (not the admin's key, whose role snapshot predates the new role) mints the key.
    const session = yield* auth.sessionPrincipal(admin.organizationId, admin.memberId)
    const { key } = yield* (yield* ApiKeys.ApiKeys).create(session, { assumedRoles: [RoleId.make(role.id)] })
    return { key, roleId: role.id as string }
  }))

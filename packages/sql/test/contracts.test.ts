/**
 * Core's contract suites against the SQL store, on PGlite and PostgreSQL. A repository implemented
 * in this package adds its suite here.
 */
import { it } from "@effect/vitest"
import { OrganizationRepoContract } from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => OrganizationRepoContract.organizationRepoContract(name, layer))

// The MemberRepo suite creates roles through `RoleRepo`, which has no SQL implementation yet:
// `runOnBothDatabases((name, layer) => MemberRepoContract.memberRepoContract(name, layer))` once it has.
it.todo("MemberRepo contract (needs RoleRepoSql)")

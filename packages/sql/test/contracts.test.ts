/**
 * Core's contract suites against the SQL store, on PGlite and PostgreSQL. A repository implemented
 * in this package adds its suite here.
 */
import { MemberRepoContract, OrganizationRepoContract } from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => OrganizationRepoContract.organizationRepoContract(name, layer))
runOnBothDatabases((name, layer) => MemberRepoContract.memberRepoContract(name, layer))

/**
 * Core's contract suites of access control (roles, groups and SCIM group mappings, API keys, the
 * audit log) against the SQL store, on PGlite and PostgreSQL.
 */
import { ApiKeyRepoContract, AuditLogRepoContract, GroupRepoContract, RoleRepoContract } from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => RoleRepoContract.roleRepoContract(name, layer))
runOnBothDatabases((name, layer) => GroupRepoContract.groupRepoContract(name, layer))
runOnBothDatabases((name, layer) => ApiKeyRepoContract.apiKeyRepoContract(`ApiKeyRepo contract: ${name}`, layer))
runOnBothDatabases((name, layer) => AuditLogRepoContract.auditLogRepoContract(`AuditLogRepo contract: ${name}`, layer))

/**
 * Core's contract suites of the runtime (sandboxes, executions, agents and runs, apps, the job
 * queue) against the SQL store, on PGlite and PostgreSQL.
 */
import {
  AgentRepoContract,
  AppRepoContract,
  AssetStoreContract,
  ChatChannelRepoContract,
  ExecutionRepoContract,
  JobQueueContract,
  SandboxRepoContract,
  SessionRepoContract,
  TransactionContract
} from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => SandboxRepoContract.sandboxRepoContract(name, layer))
runOnBothDatabases((name, layer) => ExecutionRepoContract.executionRepoContract(name, layer))
runOnBothDatabases((name, layer) => AgentRepoContract.agentRepoContract(name, layer))
runOnBothDatabases((name, layer) => AppRepoContract.appRepoContract(name, layer))
runOnBothDatabases((name, layer) => ChatChannelRepoContract.chatChannelRepoContract(name, layer))
runOnBothDatabases((name, layer) => JobQueueContract.jobQueueContract(name, layer))
runOnBothDatabases((name, layer) => AssetStoreContract.assetStoreContract(name, layer))
runOnBothDatabases((name, layer) => TransactionContract.transactionContract(name, layer))
runOnBothDatabases((name, layer) => SessionRepoContract.sessionRepoContract(name, layer))

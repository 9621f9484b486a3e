/**
 * Core's contract suites of chats, connectors and playbooks against the SQL store, on PGlite and
 * PostgreSQL.
 */
import { ChatRepoContract, ConnectorRepoContract, PlaybookRepoContract } from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => ChatRepoContract.chatRepoContract(`ChatRepo (${name})`, layer))
runOnBothDatabases((name, layer) => ConnectorRepoContract.connectorRepoContract(`ConnectorRepo (${name})`, layer))
runOnBothDatabases((name, layer) => PlaybookRepoContract.playbookRepoContract(`PlaybookRepo (${name})`, layer))

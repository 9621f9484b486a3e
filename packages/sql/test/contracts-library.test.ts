/**
 * Core's `ChangeRepo` and `LibraryStore` contract suites against the SQL store, on PGlite and
 * PostgreSQL.
 */
import { ChangeRepoContract, LibraryStoreContract } from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => ChangeRepoContract.changeRepoContract(name, layer))
runOnBothDatabases((name, layer) => LibraryStoreContract.libraryStoreContract(name, layer))

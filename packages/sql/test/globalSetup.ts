/**
 * Creates one empty PGlite cluster before the tests and writes it as a template: each test file's
 * PGlite (`utils/databases.ts`) loads it in about a second instead of running `initdb` for itself
 * (three to five). It holds no tables, as every file migrates its own random prefixes.
 */
import { PGlite } from "@electric-sql/pglite"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The empty cluster's tarball (`PgliteClient.dumpTemplate`'s format). */
    readonly pgliteTemplate: string
  }
}

export default async function setup(project: TestProject) {
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "sightline-sql-test-"))
  const template = NodePath.join(directory, "pglite-template.tar.gz")
  const db = await PGlite.create()
  const dump = await db.dumpDataDir("gzip")
  NodeFs.writeFileSync(template, new Uint8Array(await dump.arrayBuffer()))
  await db.close()
  project.provide("pgliteTemplate", template)
  return () => NodeFs.rmSync(directory, { recursive: true, force: true })
}

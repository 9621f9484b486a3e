import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as HashMap from "effect/HashMap"
import * as Redacted from "effect/Redacted"
import * as Connector from "../src/Connector.js"
import { ConnectorId, MemberId, OrganizationId } from "../src/Ids.js"
import * as SemanticLayer from "../src/SemanticLayer.js"

const at = DateTime.unsafeMake(0)
const connector = (name: string, type: "DEMO" | "MYSQL") =>
  new Connector.ConnectorRecord({
    id: ConnectorId.make(1),
    organization_id: OrganizationId.make("00000000-0000-4000-8000-000000000001"),
    owner_id: MemberId.make("00000000-0000-4000-8000-000000000002"),
    config: type === "DEMO"
      ? { connector_type: "DEMO", name, demo: { dataset: "retail" } }
      : {
        connector_type: "MYSQL",
        name,
        mysql: { host: "db", port: 3306, user: "u", password: Redacted.make(""), database: "d", ssl_mode: "disable" }
      },
    allow_sql_write_operations: false,
    include_db_session_metadata: false,
    created_at: at,
    updated_at: at
  })

const files = (entries: Record<string, string>) =>
  HashMap.fromIterable(Object.entries(entries).map(([path, text]) => [path, new TextEncoder().encode(text)] as const))

const model = (name: string, target: string) =>
  `name: ${name}\n${target}\ntables:\n  - { name: t, base_table: { table: t }, measures: [{ name: n, agg: count }] }\n`

describe("SemanticLayer.governingModel", () => {
  it("takes the model naming the connector, then one of its type; a broken one is reported, not passed over", () => {
    const read = SemanticLayer.libraryModels(files({
      "semantic/a.yaml": model("by_type", "connector_type: DEMO"),
      "semantic/b.yaml": model("by_name", "connector: Shop"),
      "semantic/c.yaml": "name: broken\nconnector: Warehouse\ntables: []\n",
      "notes/x.yaml": model("ignored", "connector: Demo")
    }))
    expect(read.models.map((m) => m.file.name)).toEqual(["by_type", "by_name"])
    const pick = (c: Connector.ConnectorRecord) => {
      const found = SemanticLayer.governingModel(read, c)
      return found === undefined ? undefined : "problems" in found ? `broken ${found.path}` : found.file.name
    }
    expect(pick(connector("Demo", "DEMO"))).toBe("by_type")
    expect(pick(connector("Shop", "DEMO"))).toBe("by_name")
    expect(pick(connector("Warehouse", "MYSQL"))).toBe("broken semantic/c.yaml")
    expect(pick(connector("Other", "MYSQL"))).toBeUndefined()
  })
})

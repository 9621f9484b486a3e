import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as ConnectorRuntime from "../src/ConnectorRuntime.js"
import * as DerivedModel from "../src/DerivedModel.js"
import * as SemanticCompiler from "../src/SemanticCompiler.js"
import * as SemanticModel from "../src/SemanticModel.js"

const column = (name: string, type: string, extra: Partial<ConnectorRuntime.Column> = {}): ConnectorRuntime.Column => ({
  name,
  type,
  nullable: false,
  primaryKey: false,
  ...extra
})

const schema: ConnectorRuntime.SchemaInfo = {
  dialect: "postgres",
  tables: [
    {
      name: "public.orders",
      rowEstimate: 10,
      comment: "Orders; status is paid, refunded or open",
      columns: [
        column("id", "integer", { primaryKey: true }),
        column("customer_id", "integer", { references: { table: "public.customers", column: "id" } }),
        column("status", "text"),
        column("total", "numeric", { comment: "in USD" }),
        column("placed_at", "timestamp with time zone"),
        column("is_gift", "boolean")
      ]
    },
    {
      name: "public.customers",
      rowEstimate: 3,
      columns: [column("id", "integer", { primaryKey: true }), column("total", "numeric"), column("Signed Up", "date")]
    },
    { name: "audit.customers", rowEstimate: 0, columns: [column("note", "text")] }
  ]
}

describe("DerivedModel.derive", () => {
  it("reads measures, dimensions, listed values, time dimensions and relationships off a schema", () => {
    const file = DerivedModel.derive("Shop DB", schema)!
    const model = Either.getOrThrow(SemanticModel.validate("derived", file))
    expect(file.name).toBe("shop_db")
    expect(file.connector).toBe("Shop DB")
    expect(file.tables.map((t) => t.name)).toEqual(["orders", "public_customers", "audit_customers"])
    const orders = file.tables[0]
    expect(orders.dimensions?.map((d) => [d.name, d.values?.map((v) => v.value)])).toEqual([
      ["status", ["paid", "refunded", "open"]],
      ["is_gift", undefined]
    ])
    expect(orders.time_dimensions).toEqual([{ name: "placed_at", data_type: "timestamp with time zone" }])
    // Two tables with a `total`: each measure is named by its table.
    expect(model.measures.map((m) => m.name)).toEqual([
      "orders_count",
      "orders_total",
      "public_customers_count",
      "public_customers_total",
      "audit_customers_count"
    ])
    expect(file.tables[1].time_dimensions).toEqual([{ name: "signed_up", expr: "\"Signed Up\"", data_type: "DATE" }])
    expect(file.relationships).toEqual([{
      name: "orders_customer_id",
      left_table: "orders",
      right_table: "public_customers",
      relationship_type: "many_to_one",
      relationship_columns: [{ left_column: "customer_id", right_column: "id" }]
    }])
    // It compiles like any model.
    const compiled = Either.getOrThrow(
      SemanticCompiler.compile(model, { metrics: ["orders_total"], dimensions: ["status"] }, "postgres")
    )
    expect(compiled.sql).toContain("SUM(\"orders\".\"v__orders_total\")")
    // And it round-trips through YAML.
    expect(Either.isRight(SemanticModel.parse("semantic/shop.yaml", SemanticModel.stringify(file)))).toBe(true)
  })

  it("takes a measure's synonym from the head of its column's comment", () => {
    expect(DerivedModel.commentHead("revenue of the order in USD")).toBe("revenue")
    expect(DerivedModel.commentHead("Monthly recurring revenue, in USD")).toBe("monthly recurring revenue")
    expect(DerivedModel.commentHead("in USD")).toBeUndefined()
    expect(DerivedModel.commentHead("the amount the customer paid after every discount was applied")).toBeUndefined()
    const file = DerivedModel.derive("Shop", {
      dialect: "postgres",
      tables: [{
        name: "public.orders",
        rowEstimate: 1,
        columns: [
          column("id", "integer", { primaryKey: true }),
          column("total", "numeric", { comment: "revenue of the order" })
        ]
      }]
    })!
    expect(file.tables[0].measures?.find((m) => m.name === "total")?.synonyms).toEqual(["revenue"])
    // A comment that says nothing of a name adds none.
    const orders = DerivedModel.derive("Shop DB", schema)!.tables[0]
    expect(orders.measures?.find((m) => m.name === "orders_total")?.synonyms).toBeUndefined()
  })

  it("quotes every column that is not a plain name, as its dialect quotes, so none is pasted into SQL", () => {
    const hostile = "x\" FROM secrets --"
    for (
      const [dialect, quoted] of [["postgres", (n: string) => `"${n.replaceAll("\"", "\"\"")}"`], [
        "mysql",
        (n: string) => `\`${n.replaceAll("`", "``")}\``
      ]] as const
    ) {
      const file = DerivedModel.derive("Shop", {
        dialect,
        tables: [{
          name: "sales",
          rowEstimate: 1,
          columns: [
            column("Order Id", "integer", { primaryKey: true }),
            column("order", "text"),
            column(hostile, "text"),
            column("Amount $", "numeric"),
            column("region", "text")
          ]
        }]
      })!
      const [table] = file.tables
      expect(table.primary_key).toEqual({ columns: [quoted("Order Id")] })
      expect(table.dimensions?.map((d) => [d.name, d.expr])).toEqual([
        ["order", quoted("order")],
        ["x_from_secrets", quoted(hostile)],
        ["region", undefined]
      ])
      expect(table.measures?.find((m) => m.name === "amount")?.expr).toBe(quoted("Amount $"))
      const model = Either.getOrThrow(SemanticModel.validate("semantic/shop.yaml", file))
      const compiled = Either.getOrThrow(
        SemanticCompiler.compile(model, { metrics: ["amount"], dimensions: ["x_from_secrets"] }, dialect)
      )
      expect(compiled.sql).toContain(quoted(hostile))
      expect(compiled.sql).not.toContain(`${hostile},`)
    }
  })

  it("has nothing to derive from a schema without tables", () => {
    expect(DerivedModel.derive("Empty", { dialect: "mysql", tables: [] })).toBeUndefined()
  })
})

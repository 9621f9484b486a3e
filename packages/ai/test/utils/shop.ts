/**
 * The semantic model the reader's tests read against: a shop's orders and customers, with value
 * synonyms, a time dimension, filtered measures and a unique customer number.
 */
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Either from "effect/Either"

export const yaml = `name: shop
tables:
  - name: orders
    base_table: { table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        synonyms: [sales channel]
        values:
          - { value: web, synonyms: [online] }
          - { value: store, synonyms: [in store] }
      - name: status
        values:
          - { value: completed }
          - { value: cancelled, synonyms: [canceled] }
    time_dimensions:
      - { name: order_date, expr: ordered_at, data_type: TIMESTAMP_TZ }
    measures:
      - { name: revenue, agg: sum, expr: amount, filters: [not_cancelled], synonyms: [sales, money] }
      - { name: orders, agg: count, filters: [not_cancelled] }
      - { name: cancelled_orders, agg: count, filters: [cancelled] }
    filters:
      - { name: not_cancelled, expr: "status <> 'cancelled'" }
      - { name: cancelled, expr: "status = 'cancelled'" }
  - name: customers
    base_table: { table: customers }
    primary_key: { columns: [id] }
    dimensions:
      - { name: customer, expr: name }
      - { name: customer_number, expr: id, unique: true }
      - name: region
        values:
          - { value: Asia Pacific, synonyms: [APAC] }
          - { value: Europe, synonyms: [EU] }
relationships:
  - { name: orders_customers, left_table: orders, right_table: customers, relationship_columns: [{ left_column: customer_id, right_column: id }] }
`

export const parsed = SemanticModel.parse("semantic/shop.yaml", yaml)
if (Either.isLeft(parsed)) throw new Error(parsed.left.map(SemanticModel.formatProblem).join("\n"))
export const semantic = [{ connector_id: 7, model: parsed.right.file, reviewed: true }]

/** The day the tests read questions on: "last year" is 2025. */
export const now = new Date(Date.UTC(2026, 10, 26))

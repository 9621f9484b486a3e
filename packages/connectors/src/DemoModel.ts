/**
 * The curated semantic model of the DEMO `retail` dataset, which every new organization finds in
 * its Context Library (`semantic/demo.yaml`): what revenue, units, orders, customers and returns
 * mean here, the regions' usual abbreviations, and verified queries for common questions.
 *
 * It takes a clear stand on cancelled orders: they earn nothing, so revenue, units, orders and
 * average order value leave them out; `all_orders` and `cancelled_orders` count them.
 *
 * @since 0.1.0
 */

/**
 * Where the model lives in a new organization's library.
 *
 * @since 0.1.0
 * @category constants
 */
export const path = "semantic/demo.yaml"

/**
 * The model, as the library holds it.
 *
 * @since 0.1.0
 * @category constants
 */
export const yaml = `# The DEMO retail dataset's semantic model. Edit it like any library file: a change is checked
# against the connector's schema, reviewed under OWNERS, and used by every answer once merged.
name: retail
description: A retail business selling electronics online, in stores and through partners, over two years.
connector_type: DEMO
time_zone: UTC
custom_instructions: >-
  Revenue means the sum of order line totals of orders that were not cancelled; cancelled orders
  earn nothing and are left out of revenue, units, orders and average order value. Money is in US
  dollars. "Last year" is the last full calendar year; "this year" the current one.

tables:
  - name: orders
    description: One row per order.
    base_table: { schema: public, table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        description: Where the order was placed.
        synonyms: [sales channel, source]
        values:
          - { value: web, synonyms: [online, website, e-commerce, ecommerce, internet] }
          - { value: store, synonyms: [stores, in-store, in store, retail, offline, shop, shops] }
          - { value: partner, synonyms: [partners, resellers, reseller, marketplace, wholesale] }
      - name: status
        description: completed, shipped (on its way) or cancelled.
        synonyms: [order status]
        values:
          - { value: completed, synonyms: [delivered, fulfilled] }
          - { value: shipped, synonyms: [in transit, on its way] }
          - { value: cancelled, synonyms: [canceled] }
    time_dimensions:
      - name: order_date
        expr: ordered_at
        data_type: TIMESTAMP_TZ
        description: When the order was placed.
        synonyms: [date, ordered, order time, purchase date]
    measures:
      - name: all_orders
        agg: count
        description: number of orders, cancelled ones included
        synonyms: [orders placed, total orders including cancelled]
        format: integer
      - name: cancelled_orders
        agg: count
        filters: [cancelled]
        description: number of cancelled orders
        synonyms: [cancellations]
        format: integer
      - name: buying_customers
        agg: count_distinct
        expr: customer_id
        filters: [not_cancelled]
        format: integer
        description: number of distinct customers with an order that was not cancelled
        synonyms: [active customers, buyers, purchasing customers, customers bought, customers who bought, customers who ordered]
    filters:
      - name: not_cancelled
        expr: status <> 'cancelled'
        description: cancelled orders excluded
        synonyms: [valid orders]
      - name: cancelled
        expr: status = 'cancelled'
        description: cancelled orders only
      - name: completed
        expr: status = 'completed'
        description: completed orders only
        synonyms: [delivered orders, fulfilled orders]

  - name: order_items
    description: Order lines, one per product in an order.
    base_table: { schema: public, table: order_items }
    primary_key: { columns: [id] }
    facts:
      - { name: line_total, expr: line_total, description: the line's revenue in USD after discount }
      - { name: quantity, expr: quantity, description: units on the line }
      - { name: list_value, expr: quantity * unit_price, description: the line at list price }
    measures:
      - name: revenue
        agg: sum
        expr: line_total
        filters: [not_cancelled]
        time_dimension: orders.order_date
        format: currency
        unit: USD
        description: sum of order line totals after discounts, cancelled orders excluded
        synonyms: [sales, turnover, income, earnings, money, net sales, takings]
      - name: units
        agg: sum
        expr: quantity
        filters: [not_cancelled]
        time_dimension: orders.order_date
        format: integer
        description: units sold on orders that were not cancelled
        synonyms: [units sold, quantity, items sold, volume, popular]
      - name: orders
        agg: count_distinct
        expr: order_id
        filters: [not_cancelled]
        time_dimension: orders.order_date
        unfiltered: all_orders
        format: integer
        description: number of orders, cancelled orders excluded
        synonyms: [order count, number of orders, purchases]
      - name: order_lines
        agg: count
        filters: [not_cancelled]
        time_dimension: orders.order_date
        format: integer
        description: number of order lines, cancelled orders excluded
        synonyms: [lines, line items]
      - name: discounts
        agg: sum
        expr: list_value - line_total
        filters: [not_cancelled]
        time_dimension: orders.order_date
        format: currency
        unit: USD
        description: list value less what was charged, cancelled orders excluded
        synonyms: [discount, markdowns, discount amount, give away, gave away, given away]

  - name: products
    description: The product catalogue.
    base_table: { schema: public, table: products }
    primary_key: { columns: [id] }
    dimensions:
      - name: product
        expr: name
        description: The product's name, its line and variant ("Aero Pro").
        synonyms: [product name, item, sku]
      - name: product_line
        expr: regexp_replace(name, ' [^ ]+$', '')
        description: The product line, the name without its variant ("Aero").
        synonyms: [line, model, range, family]
      - name: list_price
        expr: unit_price
        data_type: NUMBER
        description: The product's list price in USD, before any discount.
        synonyms: [price, list price, cost, costs, retail price, msrp, unit price, price tag]
      - name: variant
        expr: regexp_replace(name, '^.* ', '')
        description: Mini, Lite, Plus, Pro or Max.
        values:
          - { value: Mini }
          - { value: Lite }
          - { value: Plus }
          - { value: Pro }
          - { value: Max }
    time_dimensions:
      - name: launch_date
        expr: launched_on
        data_type: DATE
        description: When the product was launched.
        synonyms: [launched, launch, release date, released, came out]

  - name: categories
    description: Product categories.
    base_table: { schema: public, table: categories }
    primary_key: { columns: [id] }
    dimensions:
      - name: category
        expr: name
        synonyms: [product category, department]
        values:
          - { value: Laptops, synonyms: [laptop, notebooks, notebook, computers] }
          - { value: Phones, synonyms: [phone, smartphones, mobiles, mobile phones] }
          - { value: Audio, synonyms: [headphones, speakers, earbuds] }
          - { value: Monitors, synonyms: [monitor, displays, screens] }
          - { value: Accessories, synonyms: [accessory, cables, chargers] }
          - { value: Smart Home, synonyms: [smarthome, home automation] }
          - { value: Wearables, synonyms: [wearable, watches, fitness trackers] }
          - { value: Gaming, synonyms: [games, consoles] }

  - name: customers
    description: Customers, from when they signed up.
    base_table: { schema: public, table: customers }
    primary_key: { columns: [id] }
    dimensions:
      - name: customer
        expr: name
        description: The customer's name.
        synonyms: [customer name, client, buyer]
      - name: customer_number
        expr: id
        unique: true
        description: The customer's number, which tells apart customers who share a name.
        synonyms: [customer id, customer number]
      - name: segment
        description: Consumer or Business.
        synonyms: [customer segment, customer type]
        values:
          - { value: Consumer, synonyms: [consumers, b2c, individual, retail customers] }
          - { value: Business, synonyms: [businesses, b2b, corporate, companies] }
    time_dimensions:
      - name: signup_date
        expr: created_at
        data_type: TIMESTAMP_TZ
        description: When the customer signed up.
        synonyms: [joined, sign-up date, registration date, created, signed up, sign up, registered]
    measures:
      - name: customers
        agg: count
        format: integer
        description: number of customers (by sign-up date when read over a period)
        synonyms: [customer count, number of customers, customer base]
      - name: new_customers
        agg: count
        time_dimension: signup_date
        format: integer
        description: customers who signed up in the period
        synonyms: [new signups, sign-ups, signups, acquired customers, customer acquisition]

  - name: regions
    description: Sales regions.
    base_table: { schema: public, table: regions }
    primary_key: { columns: [id] }
    dimensions:
      - name: region
        expr: name
        synonyms: [sales region, area, geography, market]
        values:
          - { value: North America, synonyms: [NA, NORAM, NAM, AMER, US and Canada] }
          - { value: Europe, synonyms: [EU, EUR] }
          - { value: Asia Pacific, synonyms: [APAC, AsiaPac, Asia] }
          - { value: Latin America, synonyms: [LATAM, LatAm, South America] }
          - { value: Middle East & Africa, synonyms: [MEA, Middle East and Africa] }
      - name: region_code
        expr: code
        description: NA, EU, APAC, LATAM or MEA.
    filters:
      - name: emea
        expr: code IN ('EU', 'MEA')
        description: EMEA (Europe, Middle East & Africa)
        synonyms: [EMEA, Europe Middle East and Africa]

  - name: returns
    description: Returned order lines and their refunds.
    base_table: { schema: public, table: returns }
    primary_key: { columns: [id] }
    dimensions:
      - name: return_reason
        expr: reason
        synonyms: [reason, why returned]
        values:
          - { value: damaged, synonyms: [broken, defective] }
          - { value: wrong item }
          - { value: not as described }
          - { value: changed mind, synonyms: [no longer wanted] }
          - { value: late delivery, synonyms: [late, delayed] }
    time_dimensions:
      - name: return_date
        expr: returned_at
        data_type: TIMESTAMP_TZ
        description: When the line was returned.
        synonyms: [returned]
    facts:
      - { name: refund_amount, expr: refund_amount, description: what was refunded in USD }
    measures:
      - name: returns
        agg: count
        format: integer
        description: number of returned order lines, by return date
        synonyms: [returned items, returned lines, return count]
      - name: refunds
        agg: sum
        expr: refund_amount
        format: currency
        unit: USD
        description: sum of refunds, by return date
        synonyms: [refund amount, refunded, money refunded]
      - name: returned_lines
        agg: count
        time_dimension: orders.order_date
        format: integer
        description: order lines later returned, by the date they were ordered

relationships:
  - { name: items_orders, left_table: order_items, right_table: orders, relationship_type: many_to_one, relationship_columns: [{ left_column: order_id, right_column: id }] }
  - { name: items_products, left_table: order_items, right_table: products, relationship_type: many_to_one, relationship_columns: [{ left_column: product_id, right_column: id }] }
  - { name: products_categories, left_table: products, right_table: categories, relationship_type: many_to_one, relationship_columns: [{ left_column: category_id, right_column: id }] }
  - { name: orders_customers, left_table: orders, right_table: customers, relationship_type: many_to_one, relationship_columns: [{ left_column: customer_id, right_column: id }] }
  - { name: customers_regions, left_table: customers, right_table: regions, relationship_type: many_to_one, relationship_columns: [{ left_column: region_id, right_column: id }] }
  - { name: returns_items, left_table: returns, right_table: order_items, relationship_type: many_to_one, relationship_columns: [{ left_column: order_item_id, right_column: id }] }

metrics:
  - name: average_order_value
    type: ratio
    numerator: revenue
    denominator: orders
    format: currency
    description: revenue divided by the number of orders, cancelled orders excluded from both
    synonyms: [aov, average order, average basket, basket size, average order size]
  - name: lines_per_order
    type: ratio
    numerator: order_lines
    denominator: orders
    format: number
    description: order lines divided by the number of orders, cancelled orders excluded from both
    synonyms: [items per order, average items per order, average number of items per order, lines per order]
  - name: return_rate
    type: ratio
    numerator: returned_lines
    denominator: order_lines
    format: percent
    drivers: [category, channel, region]
    description: order lines later returned, divided by order lines, cancelled orders excluded
    synonyms: [returns rate, rate of returns, share returned]
  - name: revenue_share
    type: share
    measure: revenue
    description: revenue as a share of the total revenue shown
    synonyms: [share of revenue, revenue mix, percent of revenue, contribution]
  - name: revenue_growth
    type: period_over_period
    measure: revenue
    offset: 1 year
    calculation: growth
    description: revenue against the same period a year earlier, as growth
    synonyms: [year over year, yoy, growth, revenue change]
  - name: revenue_previous_year
    type: period_over_period
    measure: revenue
    offset: 1 year
    calculation: previous
    description: revenue of the same period a year earlier
    synonyms: [last year's revenue, prior year revenue]

# What an investigation breaks a change down by, in this order: "Europe, mostly Laptops".
drivers: [region, category, channel, segment]

periods:
  - name: back_to_school
    synonyms: [back-to-school, back to school season]
    description: the back-to-school shopping season
    every_year: { from: "07-15", to: "09-10" }
  - name: holiday_season
    synonyms: [holidays, holiday shopping, the holidays]
    description: the year-end holiday shopping season
    every_year: { from: "11-20", to: "12-31" }
  - name: summer
    synonyms: [summer season]
    every_year: { from: "06-01", to: "08-31" }

verified_queries:
  - name: revenue_by_channel
    question: Which sales channel makes us the most money?
    verified_by: Sightline
    verified_at: 2026-11-26
    use_as_onboarding_question: true
    sql: |
      SELECT o.channel, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled'
      GROUP BY o.channel ORDER BY revenue DESC
  - name: revenue_by_month
    question: What was revenue by month in a given year?
    parameters: [{ name: year, type: number, description: the calendar year }]
    verified_by: Sightline
    verified_at: 2026-11-26
    use_as_onboarding_question: true
    sql: |
      SELECT CAST(date_trunc('month', o.order_date AT TIME ZONE 'UTC') AS date) AS month, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled' AND EXTRACT(YEAR FROM o.order_date AT TIME ZONE 'UTC') = :year
      GROUP BY 1 ORDER BY 1
  - name: revenue_by_year
    question: How did revenue change from one year to the next?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT CAST(EXTRACT(YEAR FROM o.order_date AT TIME ZONE 'UTC') AS integer) AS year, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled'
      GROUP BY 1 ORDER BY 1
  - name: revenue_by_region
    question: What is revenue by region?
    verified_by: Sightline
    verified_at: 2026-11-26
    use_as_onboarding_question: true
    sql: |
      SELECT r.region, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __customers c ON c.id = o.customer_id JOIN __regions r ON r.id = c.region_id
      WHERE o.status <> 'cancelled'
      GROUP BY r.region ORDER BY revenue DESC
  - name: revenue_in_region
    question: What was revenue in a region in a given year?
    parameters:
      - { name: region, type: string, description: "the region's name: North America, Europe, Asia Pacific, Latin America or Middle East & Africa" }
      - { name: year, type: number, description: the calendar year }
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __customers c ON c.id = o.customer_id JOIN __regions r ON r.id = c.region_id
      WHERE o.status <> 'cancelled' AND r.region = :region
        AND EXTRACT(YEAR FROM o.order_date AT TIME ZONE 'UTC') = :year
  - name: revenue_by_category
    question: Which product categories bring in the most revenue in a given year?
    parameters: [{ name: year, type: number, description: the calendar year }]
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT ca.category, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __products p ON p.id = i.product_id JOIN __categories ca ON ca.id = p.category_id
      WHERE o.status <> 'cancelled' AND EXTRACT(YEAR FROM o.order_date AT TIME ZONE 'UTC') = :year
      GROUP BY ca.category ORDER BY revenue DESC
  - name: revenue_by_product_line
    question: Which product lines earn the most?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT p.product_line, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id JOIN __products p ON p.id = i.product_id
      WHERE o.status <> 'cancelled'
      GROUP BY p.product_line ORDER BY revenue DESC
  - name: top_products
    question: What are our best-selling products by revenue?
    parameters: [{ name: limit, type: number, description: how many products, default: 10 }]
    verified_by: Sightline
    verified_at: 2026-11-26
    use_as_onboarding_question: true
    sql: |
      SELECT p.product, SUM(i.line_total) AS revenue, SUM(i.quantity) AS units
      FROM __order_items i JOIN __orders o ON o.id = i.order_id JOIN __products p ON p.id = i.product_id
      WHERE o.status <> 'cancelled'
      GROUP BY p.product ORDER BY revenue DESC LIMIT :limit
  - name: units_by_category
    question: How many units did each category sell?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT ca.category, SUM(i.quantity) AS units
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __products p ON p.id = i.product_id JOIN __categories ca ON ca.id = p.category_id
      WHERE o.status <> 'cancelled'
      GROUP BY ca.category ORDER BY units DESC
  - name: orders_by_month
    question: How many orders did we get each month?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT CAST(date_trunc('month', o.order_date AT TIME ZONE 'UTC') AS date) AS month, COUNT(*) AS orders
      FROM __orders o WHERE o.status <> 'cancelled'
      GROUP BY 1 ORDER BY 1
  - name: average_order_value_by_channel
    question: What is the average order value by channel?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT o.channel, SUM(i.line_total) / COUNT(DISTINCT o.id) AS average_order_value
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled'
      GROUP BY o.channel ORDER BY average_order_value DESC
  - name: largest_orders
    question: What were our largest orders in dollars?
    parameters: [{ name: limit, type: number, description: how many orders, default: 10 }]
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT o.id AS order_id, o.order_date, o.channel, SUM(i.line_total) AS order_value
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      WHERE o.status <> 'cancelled'
      GROUP BY o.id, o.order_date, o.channel ORDER BY order_value DESC LIMIT :limit
  - name: new_customers_by_month
    question: How many new customers signed up each month in a given year?
    parameters: [{ name: year, type: number, description: the calendar year }]
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT CAST(date_trunc('month', c.signup_date AT TIME ZONE 'UTC') AS date) AS month, COUNT(*) AS new_customers
      FROM __customers c WHERE EXTRACT(YEAR FROM c.signup_date AT TIME ZONE 'UTC') = :year
      GROUP BY 1 ORDER BY 1
  - name: customers_by_region
    question: How many customers do we have in each region?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT r.region, COUNT(*) AS customers
      FROM __customers c JOIN __regions r ON r.id = c.region_id
      GROUP BY r.region ORDER BY customers DESC
  - name: revenue_by_segment
    question: How much revenue comes from consumers versus businesses?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT c.segment, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id JOIN __customers c ON c.id = o.customer_id
      WHERE o.status <> 'cancelled'
      GROUP BY c.segment ORDER BY revenue DESC
  - name: top_customers
    question: Who are our biggest customers by revenue?
    parameters: [{ name: limit, type: number, description: how many customers, default: 10 }]
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT c.customer, SUM(i.line_total) AS revenue, COUNT(DISTINCT o.id) AS orders
      FROM __order_items i JOIN __orders o ON o.id = i.order_id JOIN __customers c ON c.id = o.customer_id
      WHERE o.status <> 'cancelled'
      GROUP BY c.id, c.customer ORDER BY revenue DESC LIMIT :limit
  - name: return_rate_by_category
    question: Which categories have the highest return rate?
    verified_by: Sightline
    verified_at: 2026-11-26
    use_as_onboarding_question: true
    sql: |
      SELECT ca.category, CAST(COUNT(rt.id) AS numeric) / COUNT(i.id) AS return_rate
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __products p ON p.id = i.product_id JOIN __categories ca ON ca.id = p.category_id
      LEFT JOIN __returns rt ON rt.order_item_id = i.id
      WHERE o.status <> 'cancelled'
      GROUP BY ca.category ORDER BY return_rate DESC
  - name: refunds_by_reason
    question: Why do customers return products, and how much do we refund for each reason?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT rt.return_reason, COUNT(*) AS returns, SUM(rt.refund_amount) AS refunds
      FROM __returns rt GROUP BY rt.return_reason ORDER BY refunds DESC
  - name: returns_by_month
    question: How many returns did we get each month?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT CAST(date_trunc('month', rt.return_date AT TIME ZONE 'UTC') AS date) AS month, COUNT(*) AS returns,
             SUM(rt.refund_amount) AS refunds
      FROM __returns rt GROUP BY 1 ORDER BY 1
  - name: cancellation_rate_by_channel
    question: Which channel has the most cancellations?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT o.channel, COUNT(*) FILTER (WHERE o.status = 'cancelled') AS cancelled_orders,
             CAST(COUNT(*) FILTER (WHERE o.status = 'cancelled') AS numeric) / COUNT(*) AS cancellation_rate
      FROM __orders o GROUP BY o.channel ORDER BY cancellation_rate DESC
  - name: revenue_by_region_and_channel
    question: How does revenue split across regions and channels?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT r.region, o.channel, SUM(i.line_total) AS revenue
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __customers c ON c.id = o.customer_id JOIN __regions r ON r.id = c.region_id
      WHERE o.status <> 'cancelled'
      GROUP BY r.region, o.channel ORDER BY r.region, revenue DESC
  - name: discounts_by_category
    question: How much did we give away in discounts per category?
    verified_by: Sightline
    verified_at: 2026-11-26
    sql: |
      SELECT ca.category, SUM(i.list_value - i.line_total) AS discounts
      FROM __order_items i JOIN __orders o ON o.id = i.order_id
      JOIN __products p ON p.id = i.product_id JOIN __categories ca ON ca.id = p.category_id
      WHERE o.status <> 'cancelled'
      GROUP BY ca.category ORDER BY discounts DESC
`

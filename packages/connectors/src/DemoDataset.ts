/**
 * The `retail` demo dataset: a retail business over two calendar years, so a fresh install can be
 * asked questions at once. It is generated, not shipped as a dump: a seeded pseudo-random generator
 * makes the same rows every time for a given pair of years (the two years before the current one,
 * so "last year" always has data).
 *
 * Tables: regions, categories, products, customers, orders, order_items, returns (tens of thousands
 * of rows), with keys and comments that introspection reports.
 *
 * @since 0.1.0
 */

/**
 * The datasets this package ships.
 *
 * @since 0.1.0
 * @category constants
 */
export const datasets = ["retail"] as const

/** The generator: mulberry32, small and deterministic. */
const generator = (seed: number) => {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  // A weighted pick: weights need not sum to one.
  const weighted = <A>(items: ReadonlyArray<readonly [A, number]>): A => {
    const total = items.reduce((sum, [, w]) => sum + w, 0)
    let r = next() * total
    for (const [item, w] of items) {
      r -= w
      if (r < 0) return item
    }
    return items[items.length - 1]![0]
  }
  return { next, int, pick, weighted }
}

const regions = [
  ["NA", "North America", 0.34],
  ["EU", "Europe", 0.3],
  ["APAC", "Asia Pacific", 0.22],
  ["LATAM", "Latin America", 0.09],
  ["MEA", "Middle East & Africa", 0.05]
] as const

const categories: ReadonlyArray<readonly [string, ReadonlyArray<string>, number, number]> = [
  ["Laptops", ["Aero", "Nimbus", "Vector", "Quanta", "Helix"], 650, 2400],
  ["Phones", ["Pulse", "Orbit", "Nova", "Echo", "Zephyr"], 180, 1300],
  ["Audio", ["Resonance", "Cadence", "Tempo", "Aria", "Chord"], 25, 450],
  ["Monitors", ["Vista", "Panorama", "Prism", "Horizon", "Lumen"], 140, 1100],
  ["Accessories", ["Link", "Dock", "Grip", "Shield", "Spark"], 9, 120],
  ["Smart Home", ["Hearth", "Beacon", "Sentry", "Glow", "Nest"], 30, 350],
  ["Wearables", ["Stride", "Pace", "Pulse Band", "Trail", "Loop"], 60, 600],
  ["Gaming", ["Arcade", "Rally", "Quest", "Titan", "Blitz"], 35, 700]
]

const variants = ["Mini", "Lite", "Plus", "Pro", "Max"]

const firstNames = [
  "Ada",
  "Alan",
  "Grace",
  "Linus",
  "Margaret",
  "Ken",
  "Barbara",
  "Dennis",
  "Frances",
  "John",
  "Radia",
  "Tim",
  "Hedy",
  "Edsger",
  "Katherine",
  "Donald",
  "Sophie",
  "Niklaus",
  "Shafi",
  "Guido",
  "Anita",
  "Yukihiro",
  "Karen",
  "Bjarne",
  "Mary",
  "James",
  "Lovelace",
  "Carl",
  "Elena",
  "Mateo",
  "Aisha",
  "Wei",
  "Priya",
  "Kofi",
  "Ingrid"
]
const lastNames = [
  "Lovelace",
  "Turing",
  "Hopper",
  "Torvalds",
  "Hamilton",
  "Thompson",
  "Liskov",
  "Ritchie",
  "Allen",
  "Backus",
  "Perlman",
  "Berners-Lee",
  "Lamarr",
  "Dijkstra",
  "Johnson",
  "Knuth",
  "Wilson",
  "Wirth",
  "Goldwasser",
  "van Rossum",
  "Borg",
  "Matsumoto",
  "Spärck Jones",
  "Stroustrup",
  "Keller",
  "Gosling",
  "Garcia",
  "Chen",
  "Okafor",
  "Nakamura"
]
const reasons = ["damaged", "wrong item", "not as described", "changed mind", "late delivery"]

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`
// A column's values as the comments list them ("a, b or c"), which the offline model keeps to when
// a question names one ("revenue in Europe").
const listed = (values: ReadonlyArray<string>) => `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`
const money = (n: number) => (Math.round(n * 100) / 100).toFixed(2)
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * The row counts of a generated dataset (for tests and the README).
 *
 * @since 0.1.0
 * @category models
 */
export interface Counts {
  readonly regions: number
  readonly categories: number
  readonly products: number
  readonly customers: number
  readonly orders: number
  readonly order_items: number
  readonly returns: number
}

/**
 * The statements that create and fill the dataset, and its row counts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Script {
  readonly statements: ReadonlyArray<string>
  readonly counts: Counts
  /** The first and last years of the orders. */
  readonly years: readonly [number, number]
}

const schema = [
  `CREATE TABLE regions (
    id integer PRIMARY KEY,
    code text NOT NULL UNIQUE,
    name text NOT NULL
  )`,
  `COMMENT ON TABLE regions IS ${sqlText(`Sales regions; name is ${listed(regions.map(([, name]) => name))}`)}`,
  `CREATE TABLE categories (
    id integer PRIMARY KEY,
    name text NOT NULL UNIQUE
  )`,
  `COMMENT ON TABLE categories IS ${
    sqlText(`Product categories; name is ${listed(categories.map(([name]) => name))}`)
  }`,
  `CREATE TABLE products (
    id integer PRIMARY KEY,
    name text NOT NULL,
    category_id integer NOT NULL REFERENCES categories (id),
    unit_price numeric(10,2) NOT NULL,
    launched_on date NOT NULL
  )`,
  `COMMENT ON TABLE products IS 'The product catalogue'`,
  `COMMENT ON COLUMN products.unit_price IS 'list price in USD'`,
  `CREATE TABLE customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    segment text NOT NULL,
    region_id integer NOT NULL REFERENCES regions (id),
    created_at timestamptz NOT NULL
  )`,
  `COMMENT ON TABLE customers IS 'Customers; segment is Consumer or Business'`,
  `CREATE TABLE orders (
    id integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers (id),
    ordered_at timestamptz NOT NULL,
    status text NOT NULL,
    channel text NOT NULL
  )`,
  `COMMENT ON TABLE orders IS 'Orders; status is completed, shipped or cancelled; channel is web, store or partner'`,
  `CREATE TABLE order_items (
    id integer PRIMARY KEY,
    order_id integer NOT NULL REFERENCES orders (id),
    product_id integer NOT NULL REFERENCES products (id),
    quantity integer NOT NULL,
    unit_price numeric(10,2) NOT NULL,
    discount numeric(4,2) NOT NULL,
    line_total numeric(12,2) NOT NULL
  )`,
  `COMMENT ON TABLE order_items IS 'Order lines'`,
  `COMMENT ON COLUMN order_items.line_total IS 'revenue of the line in USD: quantity × unit_price × (1 − discount)'`,
  `CREATE TABLE returns (
    id integer PRIMARY KEY,
    order_item_id integer NOT NULL REFERENCES order_items (id),
    returned_at timestamptz NOT NULL,
    reason text NOT NULL,
    refund_amount numeric(12,2) NOT NULL
  )`,
  `COMMENT ON TABLE returns IS ${sqlText(`Returned order lines and their refunds; reason is ${listed(reasons)}`)}`
]

const insert = (table: string, rows: ReadonlyArray<string>): ReadonlyArray<string> => {
  const statements: Array<string> = []
  for (let i = 0; i < rows.length; i += 2000) {
    statements.push(`INSERT INTO ${table} VALUES ${rows.slice(i, i + 2000).join(",")}`)
  }
  return statements
}

/**
 * Generates the `retail` dataset for orders in `lastYear - 1` and `lastYear`.
 *
 * @since 0.1.0
 * @category utils
 */
export const retail = (lastYear: number): Script => {
  const random = generator(20240607)
  const firstYear = lastYear - 1
  const start = Date.UTC(firstYear, 0, 1)
  const end = Date.UTC(lastYear + 1, 0, 1)
  const day = 86_400_000

  const regionRows = regions.map(([code, name], i) => `(${i + 1},${sqlText(code)},${sqlText(name)})`)
  const categoryRows = categories.map(([name], i) => `(${i + 1},${sqlText(name)})`)

  const products: Array<{ id: number; price: number; popularity: number }> = []
  const productRows: Array<string> = []
  categories.forEach(([, lines, low, high], c) => {
    for (const line of lines) {
      for (const variant of variants) {
        if (random.next() < 0.4) continue
        const id = products.length + 1
        const price = low + (high - low) * Math.pow(random.next(), 1.6)
        products.push({ id, price, popularity: 0.2 + Math.pow(random.next(), 3) * 5 })
        const launched = start - random.int(0, 900) * day
        productRows.push(`(${id},${sqlText(`${line} ${variant}`)},${c + 1},${money(price)},'${isoDay(launched)}')`)
      }
    }
  })
  const productWeights = products.map((p) => [p, p.popularity] as const)

  // Customers join before and during the two years ("new customers by month" has an answer); ids
  // follow the order they joined in, and each orders only once it has joined.
  const customerCount = 3000
  const joined = Array.from({ length: customerCount }, () =>
    random.next() < 0.45
      ? start - random.int(1, 700) * day + random.int(0, 86_399) * 1000
      : start + Math.floor(random.next() * (end - start))).sort((a, b) => a - b)
  const customerRows: Array<string> = []
  for (let id = 1; id <= customerCount; id++) {
    const region = random.weighted(regions.map((r, i) => [i + 1, r[2]] as const))
    const first = random.pick(firstNames)
    const last = random.pick(lastNames)
    const segment = random.next() < 0.7 ? "Consumer" : "Business"
    const created = joined[id - 1]!
    customerRows.push(
      `(${id},${sqlText(`${first} ${last}`)},${sqlText(`customer${id}@example.com`)},${sqlText(segment)},${region},'${
        new Date(created).toISOString()
      }')`
    )
  }

  // How many customers had joined by `at`: the ids up to it (`joined` is sorted).
  const joinedBy = (at: number) => {
    let [low, high] = [0, customerCount]
    while (low < high) {
      const mid = (low + high) >>> 1
      if (joined[mid]! < at) low = mid + 1
      else high = mid
    }
    return low
  }
  const orderRows: Array<string> = []
  const itemRows: Array<string> = []
  const returnRows: Array<string> = []
  let itemId = 0
  let orderId = 0
  for (let t = start; t < end; t += day) {
    const date = new Date(t)
    const month = date.getUTCMonth()
    // Growth over the two years, a holiday peak and quieter weekends.
    const growth = 1 + 0.25 * ((t - start) / (end - start))
    const season = month === 10 ? 1.4 : month === 11 ? 1.8 : month === 0 ? 0.8 : 1
    const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 0.8 : 1
    const orders = Math.round(24 * growth * season * weekend * (0.8 + 0.4 * random.next()))
    for (let o = 0; o < orders; o++) {
      orderId += 1
      const at = t + random.int(0, 86_399) * 1000
      const customer = random.int(1, joinedBy(at))
      const status = random.weighted([["completed", 0.86], ["shipped", 0.09], ["cancelled", 0.05]] as const)
      const channel = random.weighted([["web", 0.6], ["store", 0.3], ["partner", 0.1]] as const)
      orderRows.push(`(${orderId},${customer},'${new Date(at).toISOString()}',${sqlText(status)},${sqlText(channel)})`)
      const lines = random.weighted([[1, 0.55], [2, 0.28], [3, 0.12], [4, 0.05]] as const)
      for (let l = 0; l < lines; l++) {
        itemId += 1
        const product = random.weighted(productWeights)
        const quantity = random.weighted([[1, 0.7], [2, 0.2], [3, 0.07], [5, 0.03]] as const)
        const discount = random.weighted([[0, 0.7], [0.05, 0.12], [0.1, 0.12], [0.2, 0.06]] as const)
        const unit = Math.round(product.price * 100) / 100
        const total = Math.round(quantity * unit * (1 - discount) * 100) / 100
        itemRows.push(
          `(${itemId},${orderId},${product.id},${quantity},${money(unit)},${discount.toFixed(2)},${money(total)})`
        )
        if (status !== "cancelled" && random.next() < 0.04) {
          const returned = at + random.int(2, 40) * day
          returnRows.push(
            `(${returnRows.length + 1},${itemId},'${new Date(returned).toISOString()}',${
              sqlText(random.pick(reasons))
            },${money(total * (random.next() < 0.8 ? 1 : 0.5))})`
          )
        }
      }
    }
  }

  return {
    statements: [
      ...schema,
      ...insert("regions", regionRows),
      ...insert("categories", categoryRows),
      ...insert("products", productRows),
      ...insert("customers", customerRows),
      ...insert("orders", orderRows),
      ...insert("order_items", itemRows),
      ...insert("returns", returnRows),
      "ANALYZE"
    ],
    counts: {
      regions: regionRows.length,
      categories: categoryRows.length,
      products: productRows.length,
      customers: customerRows.length,
      orders: orderRows.length,
      order_items: itemRows.length,
      returns: returnRows.length
    },
    years: [firstYear, lastYear]
  }
}

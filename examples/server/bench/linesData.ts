/**
 * The large data set of the benchmarks on PostgreSQL: regions, customers, products and `lines`
 * order lines over last year and the year before, the second year selling a little more in some
 * places than others. Read-only for the role `name`.
 */
import pg from "pg"

const lastYear = new Date().getUTCFullYear() - 1

/** The statements that create and load the data set in an empty database. */
export const setup = (name: string, lines: number): ReadonlyArray<string> => [
  `CREATE UNLOGGED TABLE regions (id int PRIMARY KEY, name text NOT NULL)`,
  `COMMENT ON TABLE regions IS 'Sales regions; name is North, South, East or West'`,
  `INSERT INTO regions VALUES (1, 'North'), (2, 'South'), (3, 'East'), (4, 'West')`,
  `CREATE UNLOGGED TABLE customers (id int PRIMARY KEY, region_id int NOT NULL REFERENCES regions, segment text NOT NULL)`,
  `COMMENT ON TABLE customers IS 'Customers; segment is Consumer or Business'`,
  `INSERT INTO customers SELECT i, 1 + i % 4, CASE WHEN i % 3 = 0 THEN 'Business' ELSE 'Consumer' END
   FROM generate_series(1, 100000) AS i`,
  `CREATE UNLOGGED TABLE products (id int PRIMARY KEY, category text NOT NULL)`,
  `COMMENT ON TABLE products IS 'Products; category is Laptops, Phones, Audio or Monitors'`,
  `INSERT INTO products SELECT i, (ARRAY['Laptops', 'Phones', 'Audio', 'Monitors'])[1 + i % 4]
   FROM generate_series(1, 400) AS i`,
  `CREATE UNLOGGED TABLE lines (id bigint NOT NULL, customer_id int NOT NULL, product_id int NOT NULL,
     channel text NOT NULL, ordered_at timestamptz NOT NULL, amount numeric(12,2) NOT NULL)`,
  `COMMENT ON TABLE lines IS 'Order lines; channel is web, store or partner'`,
  // The second year sells a little more in some places than others: a change with parts to find.
  `INSERT INTO lines SELECT i, 1 + (i * 7919) % 100000, 1 + (i * 104729) % 400,
     (ARRAY['web', 'store', 'partner'])[1 + i % 3],
     timestamptz '${lastYear - 1}-01-01' + ((i * 37) % 730) * interval '1 day' + (i % 86400) * interval '1 second',
     round((((i * 7919) % 100000) / 100.0 * CASE WHEN (i * 37) % 730 >= 365 AND i % 4 = 0 THEN 1.3 ELSE 1 END)::numeric, 2)
   FROM generate_series(1::bigint, ${lines}) AS i`,
  `ALTER TABLE lines ADD PRIMARY KEY (id)`,
  // Declared, not checked again: the rows were made to hold them.
  `ALTER TABLE lines ADD FOREIGN KEY (customer_id) REFERENCES customers NOT VALID`,
  `ALTER TABLE lines ADD FOREIGN KEY (product_id) REFERENCES products NOT VALID`,
  `ANALYZE`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${name}`
]

/**
 * A database and a login role named `name` on the server of `database`, loaded with `lines` order
 * lines: its URL, and `drop` to remove both (a failed load removes them at once).
 */
export const load = async (database: string, name: string, lines: number) => {
  const admin = new pg.Client({ connectionString: database })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.query(`CREATE ROLE ${name} LOGIN`)
  const url = new URL(database)
  url.pathname = `/${name}`
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`DROP ROLE IF EXISTS ${name}`)
    await admin.end()
  }
  try {
    const data = new pg.Client({ connectionString: url.toString() })
    // Dropping the database at the end ends this connection too, if a failure left it open.
    data.on("error", () => {})
    await data.connect()
    const loading = performance.now()
    console.log(`loading ${lines.toLocaleString("en-US")} order lines into ${name}…`)
    for (const statement of setup(name, lines)) await data.query(statement)
    console.log(`loaded in ${((performance.now() - loading) / 1000).toFixed(1)} s`)
    await data.end()
  } catch (error) {
    await drop()
    throw error
  }
  return { url, drop }
}

/**
 * Core's `ConnectorTester` over real drivers (`POST /v2/connectors/test`): it really connects and
 * says why it could not, in words a user can act on (authentication, an unreachable or unknown host,
 * an unknown database). The password never appears in a message.
 *
 * @since 0.1.0
 */
import type * as Connector from "@sightline/core/Connector"
import { ConnectorTester } from "@sightline/core/ConnectorTester"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pg from "pg"
import * as DemoDataset from "./DemoDataset.js"
import * as Mysql from "./internal/mysql.js"
import { clientConfig } from "./Runtime.js"

/** How long a test waits for the server. */
export const connectTimeoutMillis = 5_000

/** Why a PostgreSQL connection failed, for a person. */
export const explain = (error: unknown, settings: Connector.PostgresSettings): string => {
  const e = (typeof error === "object" && error !== null ? error : {}) as { code?: string; message?: string }
  const where = `${settings.host}:${settings.port}`
  switch (e.code) {
    case "28P01":
    case "28000":
      return `authentication failed for user "${settings.user}"`
    case "3D000":
      return `database "${settings.database}" does not exist on ${where}`
    case "ECONNREFUSED":
      return `cannot reach ${where}: connection refused`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot resolve host ${settings.host}`
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `cannot reach ${where}: ${e.code}`
  }
  const message = e.message ?? String(error)
  if (/timeout/i.test(message)) return `cannot reach ${where}: no answer within ${connectTimeoutMillis / 1000} s`
  return message
}

/** Why a MySQL connection failed, for a person. */
export const explainMysql = (error: unknown, settings: Connector.MysqlSettings): string => {
  const e = (typeof error === "object" && error !== null ? error : {}) as { code?: string; message?: string }
  const where = `${settings.host}:${settings.port}`
  switch (e.code) {
    case "ER_ACCESS_DENIED_ERROR":
    case "ER_DBACCESS_DENIED_ERROR":
      return `authentication failed for user "${settings.user}"`
    case "ER_BAD_DB_ERROR":
      return `database "${settings.database}" does not exist on ${where}`
    case "ECONNREFUSED":
      return `cannot reach ${where}: connection refused`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot resolve host ${settings.host}`
    case "ETIMEDOUT":
      return `cannot reach ${where}: no answer within ${connectTimeoutMillis / 1000} s`
  }
  return e.message ?? String(error)
}

const testMysql = (settings: Connector.MysqlSettings) =>
  Effect.promise(async (): Promise<Connector.TestConnectorResponse> => {
    const error = await Mysql.probe(settings, connectTimeoutMillis)
    return error === undefined ? { success: true } : { success: false, error: explainMysql(error, settings) }
  })

const testPostgres = (settings: Connector.PostgresSettings) =>
  Effect.promise(async (): Promise<Connector.TestConnectorResponse> => {
    const client = new pg.Client(clientConfig(settings, connectTimeoutMillis))
    client.on("error", () => undefined)
    try {
      await client.connect()
      await client.query("SELECT 1")
      return { success: true }
    } catch (error) {
      return { success: false, error: explain(error, settings) }
    } finally {
      await client.end().catch(() => undefined)
    }
  })

/** The tester. */
export const layer: Layer.Layer<ConnectorTester> = Layer.succeed(
  ConnectorTester,
  ConnectorTester.of({
    test: (config) =>
      (config.connector_type === "POSTGRES"
        ? testPostgres(config.postgres)
        : config.connector_type === "MYSQL"
        ? testMysql(config.mysql)
        : Effect.succeed<Connector.TestConnectorResponse>(
          (DemoDataset.datasets as ReadonlyArray<string>).includes(config.demo.dataset)
            ? { success: true }
            : {
              success: false,
              error: `unknown demo dataset ${config.demo.dataset} (available: ${DemoDataset.datasets.join(", ")})`
            }
        )).pipe(Effect.withSpan("ConnectorTester.test", { attributes: { connector_type: config.connector_type } }))
  })
)

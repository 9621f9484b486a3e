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

/** Where a connection goes, as the explanations name it. */
interface Target {
  readonly host: string
  readonly port: number
  readonly user: string
  readonly database: string
}

/** The driver's codes for a refused login and for an unknown database. */
interface DriverCodes {
  readonly authentication: ReadonlyArray<string>
  readonly unknownDatabase: ReadonlyArray<string>
}

/** `pg`'s (PostgreSQL SQLSTATEs) and `mysql2`'s codes. */
export const postgresCodes: DriverCodes = { authentication: ["28P01", "28000"], unknownDatabase: ["3D000"] }
export const mysqlCodes: DriverCodes = {
  authentication: ["ER_ACCESS_DENIED_ERROR", "ER_DBACCESS_DENIED_ERROR"],
  unknownDatabase: ["ER_BAD_DB_ERROR"]
}

/** Why a connection failed, for a person: the driver's codes first, then the network's. */
export const explain = (error: unknown, target: Target, codes: DriverCodes): string => {
  const e = (typeof error === "object" && error !== null ? error : {}) as { code?: string; message?: string }
  const where = `${target.host}:${target.port}`
  if (e.code !== undefined && codes.authentication.includes(e.code)) {
    return `authentication failed for user "${target.user}"`
  }
  if (e.code !== undefined && codes.unknownDatabase.includes(e.code)) {
    return `database "${target.database}" does not exist on ${where}`
  }
  switch (e.code) {
    case "ECONNREFUSED":
      return `cannot reach ${where}: connection refused`
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot resolve host ${target.host}`
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `cannot reach ${where}: ${e.code}`
  }
  const message = e.message ?? String(error)
  return e.code === "ETIMEDOUT" || /timeout/i.test(message)
    ? `cannot reach ${where}: no answer within ${connectTimeoutMillis / 1000} s`
    : message
}

const testMysql = (settings: Connector.MysqlSettings) =>
  Effect.promise(async (): Promise<Connector.TestConnectorResponse> => {
    const error = await Mysql.probe(settings, connectTimeoutMillis)
    return error === undefined ? { success: true } : { success: false, error: explain(error, settings, mysqlCodes) }
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
      return { success: false, error: explain(error, settings, postgresCodes) }
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

/**
 * Core's `ConnectorTester` over real drivers (`POST /v2/connectors/test`): it really connects, under
 * the same access rules as the runtime (public addresses only and no superuser role, unless the
 * operator allows more), and says why it could not in words a user can act on without learning
 * anything about the network behind the server. The password never appears in a message.
 *
 * @since 0.1.0
 */
import type * as Connector from "@sightline/core/Connector"
import { ConnectorTester } from "@sightline/core/ConnectorTester"
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pg from "pg"
import * as DemoDataset from "./DemoDataset.js"
import * as Access from "./internal/access.js"
import * as Mysql from "./internal/mysql.js"
import { clientConfig } from "./Runtime.js"

/**
 * How long a test waits for the server.
 *
 * @since 0.1.0
 * @category constants
 */
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

/**
 * `pg`'s (PostgreSQL SQLSTATEs) and `mysql2`'s codes.
 *
 * @since 0.1.0
 * @category constants
 */
export const postgresCodes: DriverCodes = { authentication: ["28P01", "28000"], unknownDatabase: ["3D000"] }
export const mysqlCodes: DriverCodes = {
  authentication: ["ER_ACCESS_DENIED_ERROR", "ER_DBACCESS_DENIED_ERROR"],
  unknownDatabase: ["ER_BAD_DB_ERROR"]
}

/**
 * Why a connection failed, for a person. Only what the database server itself answered (a refused
 * login, an unknown database) and the network rule's own refusal are told apart: a refused port,
 * a silent one and a service that speaks another protocol are one "could not connect", so that the
 * test is no port scanner. The precise reason goes to the server's log.
 *
 * @since 0.1.0
 * @category utils
 */
export const explain = (error: unknown, target: Target, codes: DriverCodes): string => {
  const e = (typeof error === "object" && error !== null ? error : {}) as { code?: string; message?: string }
  if (error === "powerful") return Access.superuserMessage(target.user)
  if (NetworkAccess.isRefusal(error)) return Access.refusedMessage(target.host)
  if (e.code !== undefined && codes.authentication.includes(e.code)) {
    return `authentication failed for user "${target.user}"`
  }
  if (e.code !== undefined && codes.unknownDatabase.includes(e.code)) {
    return `database "${target.database}" does not exist on ${target.host}:${target.port}`
  }
  return `could not connect to ${target.host}:${target.port}`
}

// The answer, with the precise reason of a failure in the log (never the password: drivers do not
// put it in their errors).
const answer = (error: unknown, target: Target, codes: DriverCodes) => {
  if (error === undefined) return Effect.succeed<Connector.TestConnectorResponse>({ success: true })
  const response: Connector.TestConnectorResponse = { success: false, error: explain(error, target, codes) }
  return Effect.as(
    Effect.logInfo("connector test failed").pipe(
      Effect.annotateLogs({
        host: target.host,
        port: target.port,
        reason: typeof error === "object" && error !== null
          ? `${(error as { code?: string }).code ?? ""} ${(error as { message?: string }).message ?? ""}`.trim()
          : String(error)
      })
    ),
    response
  )
}

const testMysql = (settings: Connector.MysqlSettings, access: Access.Access) =>
  Effect.flatMap(
    Effect.promise(() => Mysql.probe(settings, connectTimeoutMillis, access)),
    (error) => answer(error, settings, mysqlCodes)
  )

const testPostgres = (settings: Connector.PostgresSettings, access: Access.Access) =>
  Effect.flatMap(
    Effect.promise(async (): Promise<unknown> => {
      const client = new pg.Client(clientConfig(settings, connectTimeoutMillis, access.network))
      client.on("error", () => undefined)
      try {
        await client.connect()
        if (access.allowSuperuser) return undefined
        const result = await client.query(Access.postgresPowerQuery)
        return result.rows[0]?.powerful === true ? "powerful" : undefined
      } catch (error) {
        return error
      } finally {
        await client.end().catch(() => undefined)
      }
    }),
    (error) => answer(error, settings, postgresCodes)
  )

/**
 * The tester under the operator's access rules (`Runtime.Options.access`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (access: Access.Access): Layer.Layer<ConnectorTester> =>
  Layer.succeed(
    ConnectorTester,
    ConnectorTester.of({
      test: (config) =>
        (config.connector_type === "POSTGRES"
          ? testPostgres(config.postgres, access)
          : config.connector_type === "MYSQL"
          ? testMysql(config.mysql, access)
          : config.connector_type === "FILES"
          // Its files loaded when it was made: there is nothing to reach.
          ? Effect.succeed<Connector.TestConnectorResponse>({ success: true })
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

/**
 * The tester with the default access: public addresses only, no superuser.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ConnectorTester> = layerWith(Access.defaults)

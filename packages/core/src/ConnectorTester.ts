/**
 * The connector tester port: tries a connector configuration (`POST /v2/connectors/test`).
 *
 * Testing reaches out to a database, so it is a port; the driver-backed implementation comes with
 * an adapter. A connection that fails is an answer (`{success: false, error}`), not an error: the
 * endpoint answers 200 either way, and an infrastructure failure of the tester itself is a defect.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ConnectorConfig, TestConnectorResponse } from "./Connector.js"

/**
 * Tries connector configurations.
 *
 * @since 0.1.0
 * @category services
 */
export class ConnectorTester extends Context.Tag("@sightline/core/ConnectorTester")<
  ConnectorTester,
  ConnectorTester.Service
>() {}

export declare namespace ConnectorTester {
  /** Connection testing. */
  export interface Service {
    /**
     * Connects with the complete configuration (confidential settings filled in) and reports
     * whether it worked; `error` says why not, in words a user can act on.
     */
    readonly test: (config: ConnectorConfig) => Effect.Effect<TestConnectorResponse>
  }
}

/**
 * A tester without drivers: the embedded demo type needs no server, so it always succeeds; every
 * other type answers that no driver is available here (rather than pretending a database answered).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ConnectorTester> = Layer.succeed(
  ConnectorTester,
  ConnectorTester.of({
    test: (config) =>
      Effect.succeed(
        // The demo and uploaded files are the server's own.
        config.connector_type === "DEMO" || config.connector_type === "FILES"
          ? { success: true }
          : { success: false, error: `no ${config.connector_type} driver is available in memory` }
      ).pipe(Effect.withSpan("ConnectorTester.test", { attributes: { connector_type: config.connector_type } }))
  })
)

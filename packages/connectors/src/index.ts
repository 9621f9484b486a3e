/**
 * @sightline/connectors: live data connectors for Sightline (core's `ConnectorRuntime` and
 * `ConnectorTester`): PostgreSQL through `pg`, and the embedded DEMO dataset on PGlite.
 *
 * @since 0.1.0
 */
export * as DemoDataset from "./DemoDataset.js"
export * as Runtime from "./Runtime.js"
export * as Tester from "./Tester.js"

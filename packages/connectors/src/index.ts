/**
 * @sightline/connectors: live data connectors for Sightline (core's `ConnectorRuntime` and
 * `ConnectorTester`): PostgreSQL through `pg`, MySQL and MariaDB through `mysql2`, the embedded DEMO
 * dataset on PGlite; and `WebSearch` over SearXNG.
 *
 * @since 0.1.0
 */
export * as ClientAttributes from "./ClientAttributes.js"
export * as DemoDataset from "./DemoDataset.js"
export * as DemoModel from "./DemoModel.js"
export * as FilesConnector from "./FilesConnector.js"
export * as FilesDatabase from "./FilesDatabase.js"
export * as Runtime from "./Runtime.js"
export * as Searxng from "./Searxng.js"
export * as Tester from "./Tester.js"

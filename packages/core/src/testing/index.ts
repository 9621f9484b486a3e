/**
 * `@sightline/core/testing`: the contract test suite of every port, for adapters to prove
 * themselves against, and the fixtures those suites use.
 *
 * @since 0.1.0
 */
export * as Fixtures from "./Fixtures.js"

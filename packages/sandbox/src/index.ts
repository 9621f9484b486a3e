/**
 * @since 0.1.0
 */
export * as BubblewrapRuntime from "./BubblewrapRuntime.js"

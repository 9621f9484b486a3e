/**
 * @since 0.1.0
 */
export * as Smtp from "./Smtp.js"
export * as VegaCharts from "./VegaCharts.js"

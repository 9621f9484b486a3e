/**
 * @since 0.1.0
 */
export * as ChatWebhook from "./ChatWebhook.js"
export * as ClientDocuments from "./ClientDocuments.js"
export * as EventWebhook from "./EventWebhook.js"
export * as Smtp from "./Smtp.js"
export * as Transport from "./Transport.js"
export * as VegaCharts from "./VegaCharts.js"

/**
 * An organization that embeds Sightline for its end users: a DEMO connector whose library model
 * keeps each caller to its region's rows (`region` of the client attributes), two dashboards, and
 * the given page origin among its `embed_origins`.
 */
import { expect } from "vitest"
import { demoConnector, editModel, mergeFiles } from "./content.js"
import type { Org, TestServer } from "./server.js"

const lastYear = new Date().getUTCFullYear() - 1

/** A dashboard of revenue by region last year. */
export const salesDashboard = `title: Sales
connector: Demo retail
tiles:
  - title: Revenue by region
    query: { semantic: { metrics: [revenue], dimensions: [region], time: { start: "${lastYear}-01-01", end: "${
  lastYear + 1
}-01-01" } } }
    visualization: { type: bar }
    layout: { x: 0, y: 0, w: 6, h: 4 }
`

export const embeddingOrg = async (
  server: TestServer,
  origins: ReadonlyArray<string>
): Promise<{ readonly org: Org; readonly connectorId: number }> => {
  const org = await server.newOrg()
  const connectorId = await demoConnector(server, org)
  await editModel(server, org, (yaml) =>
    yaml.replace(
      "base_table: { schema: public, table: regions }",
      "base_table: { schema: public, table: regions }\n    row_filter: code = _svc.client_attributes_json.region"
    ))
  const settings = await server.request("/v2/organization/settings", {
    method: "PATCH",
    key: org.key,
    json: { embed_origins: origins }
  })
  expect(settings.status).toBe(200)
  await mergeFiles(server, org, { "dashboards/sales.yaml": salesDashboard, "dashboards/hidden.yaml": salesDashboard })
  return { org, connectorId }
}

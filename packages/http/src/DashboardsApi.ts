/**
 * The Dashboards group of /v2: dashboards are library files (`dashboards/<name>.yaml`); these
 * operations list and read the ones the caller may read, run a dashboard's tiles for the caller
 * under its row-level security, and pin a chat's answer to a dashboard as a library change.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Dashboard from "@sightline/core/Dashboard"
import { CellId, ChatId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const NamePath = Schema.Struct({ name: Dashboard.Name })

/**
 * The Dashboards operations.
 *
 * @since 0.1.0
 * @category models
 */
export class DashboardsApi extends HttpApiGroup.make("dashboards")
  .add(
    HttpApiEndpoint.get("list", "/v2/dashboards")
      .addSuccess(Dashboard.ListResponse)
      .annotate(OpenApi.Summary, "The dashboards of the library that the caller may read")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/dashboards/:name")
      .setPath(NamePath)
      .addSuccess(Dashboard.View)
      .annotate(OpenApi.Summary, "A dashboard's definition, with the library commit it was read at")
  )
  .add(
    HttpApiEndpoint.post("query", "/v2/dashboards/:name/query")
      .setPath(NamePath)
      .setPayload(strict(Dashboard.QueryRequest))
      .addSuccess(Dashboard.QueryResponse)
      .annotate(OpenApi.Summary, "Run a dashboard's tiles for the caller, under its row-level security")
      .annotate(
        OpenApi.Description,
        "The tiles run concurrently on the dashboard's connector, read-only, with the caller's client attributes " +
          "bound. Each answers its rows, how its query was read, whether a reviewed definition vouches for it, and " +
          "its Vega-Lite specification; a tile that fails says why and the others are still answered. Rows are " +
          "kept for the next run of the tile with the same filter values and client attributes, until the library's main " +
          "moves or the dashboard's cache_seconds pass."
      )
  )
  .add(
    HttpApiEndpoint.post("edit", "/v2/dashboards/:name/edit")
      .setPath(NamePath)
      .setPayload(strict(Dashboard.EditRequest))
      .addSuccess(Dashboard.EditResult, { status: 201 })
      .annotate(OpenApi.Summary, "Rename or move a dashboard's tiles, as a library change")
      .annotate(
        OpenApi.Description,
        "Each tile is named by its index; a title or a layout given replaces its own. The edited file must still " +
          "read (no tile past the grid or over another, no two titles alike). The change is filed as the caller and " +
          "reviewed under OWNERS like any other."
      )
  )
  .add(
    HttpApiEndpoint.post("pin", "/v2/chats/:id/cells/:cellId/pin")
      .setPath(Schema.Struct({ id: ChatId, cellId: CellId }))
      .setPayload(strict(Dashboard.PinRequest))
      .addSuccess(Dashboard.PinResult, { status: 201 })
      .annotate(OpenApi.Summary, "Pin a chat cell's query to a dashboard, as a library change")
      .annotate(
        OpenApi.Description,
        "The cell's semantic or verified query (or its SQL, where the caller may run SQL on the connector) becomes " +
          "a tile of dashboards/<dashboard>.yaml, created when absent. The change is filed as the caller and " +
          "reviewed under OWNERS like any other: the tile shows once it merges."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Dashboards")
{}

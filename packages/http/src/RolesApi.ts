/**
 * The Roles group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { RoleId } from "@sightline/core/Ids"
import * as Role from "@sightline/core/Role"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: RoleId })

/**
 * The Roles operations.
 *
 * @since 0.1.0
 * @category models
 */
export class RolesApi extends HttpApiGroup.make("roles")
  .add(
    HttpApiEndpoint.get("list", "/v2/roles")
      .addSuccess(Role.RoleList)
      .annotate(OpenApi.Summary, "List roles (role:read)")
  )
  .add(
    HttpApiEndpoint.post("create", "/v2/roles")
      .setPayload(strict(Role.CreateRole))
      .addSuccess(Role.Role, { status: 201 })
      .annotate(OpenApi.Summary, "Create a role (role:write)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/roles/:id")
      .setPath(IdPath)
      .setPayload(strict(Role.UpdateRole))
      .addSuccess(Role.Role)
      .annotate(OpenApi.Summary, "Update a role's name, description, permissions or model configuration (role:write)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/roles/:id")
      .setPath(IdPath)
      .addSuccess(Role.DeleteRoleResult)
      .annotate(OpenApi.Summary, "Delete a custom role (role:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Roles")
{}

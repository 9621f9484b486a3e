/**
 * The OAuth group of /v2: the console's consent page asks through it (a member signed in to the
 * console), and admins list and revoke the connected agents. The OAuth protocol's own endpoints
 * are `McpOAuth`'s.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as OAuth from "@sightline/core/OAuth"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The OAuth operations.
 *
 * @since 0.1.0
 * @category models
 */
export class OAuthApi extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.get("consent", "/v2/oauth/consent")
      .setUrlParams(OAuth.AuthorizationRequest)
      .addSuccess(OAuth.Consent)
      .annotate(OpenApi.Summary, "What an agent's authorization request asks for, checked (a signed-in member)")
  )
  .add(
    HttpApiEndpoint.post("decide", "/v2/oauth/consent")
      .setPayload(strict(OAuth.Decision))
      .addSuccess(OAuth.Decided)
      .annotate(OpenApi.Summary, "Approve or refuse an agent's authorization request (a signed-in member)")
      .annotate(
        OpenApi.Description,
        "Answers where to send the browser: the client's redirect URI with a one-minute code, or with " +
          "error=access_denied."
      )
  )
  .add(
    HttpApiEndpoint.get("grants", "/v2/oauth/grants")
      .addSuccess(OAuth.GrantList)
      .annotate(OpenApi.Summary, "The agents connected with OAuth, by member (organization:read)")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v2/oauth/clients/:client_id")
      .setPath(Schema.Struct({ client_id: Schema.String }))
      .addSuccess(OAuth.Revoked)
      .annotate(OpenApi.Summary, "Disconnect an agent: end every grant of the client (organization:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "OAuth")
{}

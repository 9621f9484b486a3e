/**
 * `GET /v2/assets/{id}`: the target of a signed asset URL. It carries no bearer token (a browser
 * follows it from an `<img>` or a link), so the group has no `Authentication`: the signature made by
 * `AssetUrls` is the credential.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { AssetId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"

/**
 * The signed URL's query: unix-seconds expiry and the hex HMAC-SHA256 of `"{id}.{expires}"`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignedUrlParams = Schema.Struct({ expires: Schema.String, signature: Schema.String })

/**
 * The asset operations (no bearer authentication).
 *
 * @since 0.1.0
 * @category models
 */
export class AssetsApi extends HttpApiGroup.make("assets")
  .add(
    HttpApiEndpoint.get("get", "/v2/assets/:id")
      .setPath(Schema.Struct({ id: AssetId }))
      .setUrlParams(SignedUrlParams)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/plain" }))
      .annotate(
        OpenApi.Summary,
        "An asset's content through a signed URL, with the asset's own content type (expired or altered signature: 403)"
      )
  )
  .annotate(OpenApi.Title, "Assets")
{}

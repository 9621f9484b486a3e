import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chats from "@sightline/core/Chats"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { AssetUrls } from "../../AssetUrls.js"
import * as HttpErrors from "../../HttpErrors.js"
import { only } from "../only.js"

const denied = new HttpErrors.PermissionDenied({
  error: { code: "permission_denied", message: "The asset URL is expired or its signature is invalid" }
})

const notFound = (message: string) => new HttpErrors.NotFound({ error: { code: "not_found", message } })

// Inline content is always text; say its charset when the stored type does not.
const contentTypeOf = (mimeType: string) => /charset=/i.test(mimeType) ? mimeType : `${mimeType}; charset=utf-8`

export const layer = HttpApiBuilder.group(SightlineApi, "assets", (handlers) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const urls = yield* AssetUrls
    return handlers.handle("get", ({ path, urlParams }) =>
      Effect.gen(function*() {
        // The signature is checked first, so an unsigned probe cannot learn which asset ids exist.
        if (!(yield* urls.verify(path.id, urlParams.expires, urlParams.signature))) return yield* Effect.fail(denied)
        const { bytes, record } = yield* chats.assetForSignedUrl(path.id).pipe(
          Effect.catchTag("NotFound", () => Effect.fail(notFound("Asset not found")))
        )
        const headers = {
          // An HTML asset may run its scripts, but in an opaque origin: never as the API's origin.
          "content-security-policy": "sandbox allow-scripts",
          "x-content-type-options": "nosniff",
          "cache-control": "private, no-store",
          "content-disposition": `${record.type === "download" ? "attachment" : "inline"}; filename*=UTF-8''${
            encodeURIComponent(record.name)
          }`
        }
        return bytes === undefined
          ? HttpServerResponse.text(record.content ?? "", { contentType: contentTypeOf(record.mime_type), headers })
          : HttpServerResponse.uint8Array(bytes.bytes, { contentType: bytes.mimeType, headers })
      }))
  })).pipe(only(Chats.Chats, AssetUrls))

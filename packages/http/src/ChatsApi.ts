/**
 * The Chat group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Authentication } from "./Authentication.js"

/** The Chat operations. */
export class ChatsApi extends HttpApiGroup.make("chats")
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
{}

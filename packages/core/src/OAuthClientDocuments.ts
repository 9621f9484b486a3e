/**
 * The port that reads OAuth client ID metadata documents: a client whose `client_id` is an https
 * URL publishes its registration there (the MCP authorization spec's preferred registration), and
 * the server reads it when the client asks for authorization. The URL is the client's to name, so an
 * adapter connects only where the operator allows (public addresses by default), with a time and
 * size limit. Absent, such clients must register dynamically.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A document that could not be read, in words safe to show the member.
 *
 * @since 0.1.0
 * @category errors
 */
export class ClientDocumentError extends Schema.TaggedError<ClientDocumentError>()("ClientDocumentError", {
  message: Schema.String
}) {}

/**
 * Reads client ID metadata documents.
 *
 * @since 0.1.0
 * @category services
 */
export class OAuthClientDocuments extends Context.Tag("@sightline/core/OAuthClientDocuments")<
  OAuthClientDocuments,
  OAuthClientDocuments.Service
>() {}

export declare namespace OAuthClientDocuments {
  /** The reader. */
  export interface Service {
    /** The JSON at `url` (https), as parsed. */
    readonly fetch: (url: string) => Effect.Effect<unknown, ClientDocumentError>
  }
}

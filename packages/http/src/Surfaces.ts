/**
 * The routes that speak a protocol of their own: Connect (the RPC surface and the agent webhook),
 * MCP, and the sandbox channel between server processes. They are a router of their own, served
 * beside the /v2 application rather than inside it: the application's checks and error envelope
 * (`Server.layerEnvelope`) answer in Sightline's JSON, which a Connect, MCP or RPC client does not
 * read, and their bodies have limits of their own. The host's middleware (CORS, a role gate) wraps
 * both alike (`Server.httpApp`).
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"

/**
 * The router of the surfaces: a surface adds its routes with `Surfaces.use`.
 *
 * @since 0.1.0
 * @category services
 */
export class Surfaces extends HttpRouter.Tag("@sightline/http/Surfaces")<Surfaces>() {}

/**
 * The MCP server: Sightline as a data tool of any agent, over the Model Context Protocol's
 * Streamable HTTP transport at `POST /mcp` (the official TypeScript SDK v2, stateless: each request
 * stands alone, so any server process answers it). It speaks the stateless revision 2026-07-28 and
 * the 2025 revisions.
 *
 * A caller authenticates as on `/v2`, with `Authorization: Bearer <API key or session token>`: the
 * key's assumed roles, owner, expiry and revocation, and its client metadata's row-level security,
 * apply to every tool call. Failed credentials count toward the same per-address limit, and each
 * call spends a token of the organization's rate limit. Where the host turns OAuth on (`McpOAuth`),
 * an agent may also present a grant's access token: it acts as the member who consented, narrowed by
 * the granted scopes. Where OAuth is off, no OAuth metadata is advertised (a client that sees some
 * starts OAuth even with a key configured).
 *
 * A request that carries an `Origin` (a browser's) must come from the deployment's public URL or an
 * allowed origin (`PublicUrl.originAllowed`): another site's page cannot drive a member's agent, even
 * under a name rebound to the server's address. Every tool call is in the audit log (`mcp.tool_call`).
 *
 * @since 0.1.0
 */
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { AuthInfo, CallToolResult } from "@modelcontextprotocol/server"
import type * as Answers from "@sightline/core/Answers"
import { Auditor } from "@sightline/core/Auditor"
import * as Auth from "@sightline/core/Auth"
import type * as Connectors from "@sightline/core/Connectors"
import type * as Dashboards from "@sightline/core/Dashboards"
import type * as Investigations from "@sightline/core/Investigations"
import type { Library } from "@sightline/core/Library"
import type * as PlaybookRuns from "@sightline/core/PlaybookRuns"
import type * as Playbooks from "@sightline/core/Playbooks"
import * as Policy from "@sightline/core/Policy"
import * as RateLimiter from "@sightline/core/RateLimiter"
import type * as SemanticLayer from "@sightline/core/SemanticLayer"
import type * as SqlQueries from "@sightline/core/SqlQueries"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type { AssetUrls } from "./AssetUrls.js"
import { makeGuarded } from "./Authentication.js"
import type * as FailedAuthentications from "./FailedAuthentications.js"
import * as HttpErrors from "./HttpErrors.js"
import * as BodyLimit from "./internal/bodyLimit.js"
import * as McpTools from "./internal/mcpTools.js"
import * as McpOAuth from "./McpOAuth.js"
import * as OAuthTokens from "./OAuthTokens.js"
import * as PublicUrl from "./PublicUrl.js"
import * as RateLimit from "./RateLimit.js"
import { Surfaces } from "./Surfaces.js"

/**
 * The path of the MCP endpoint.
 *
 * @since 0.1.0
 * @category constants
 */
export const path = "/mcp"

/**
 * The stateless revision: each request carries its own protocol version and capabilities (no
 * `initialize`), served by the SDK's per-request handler.
 *
 * @since 0.1.0
 * @category constants
 */
export const statelessRevision = "2026-07-28"

/**
 * The MCP protocol revisions served, newest first: the stateless revision, and the 2025 revisions
 * (the SDK's, negotiated in `initialize`), each of those requests served on its own too.
 *
 * @since 0.1.0
 * @category constants
 */
export const protocolVersions: Effect.Effect<ReadonlyArray<string>> = Effect.map(
  Effect.promise(() => sdk()),
  (mcp) => [statelessRevision, ...mcp.SUPPORTED_PROTOCOL_VERSIONS]
)

type Sdk = typeof import("@modelcontextprotocol/server")
let loading: Promise<Sdk> | undefined
// The SDK (and zod under it, more than a third of the server's code) loads at the first MCP request,
// not when a server that may never be asked over MCP starts. Once: a module is loaded once anyway.
const sdk = (): Promise<Sdk> => (loading ??= import("@modelcontextprotocol/server"))

// JSON-RPC 2.0's "Invalid Request" (the SDK's `ProtocolErrorCode.InvalidRequest`): a refusal is
// answered before, and without, the SDK.
const invalidRequest = -32600

/**
 * The largest request body the endpoint reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBodyBytes = BodyLimit.maxBodyBytes

// A JSON-RPC error outside any request (no id): refused credentials, a foreign Origin, a limit.
const refusal = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({
    jsonrpc: "2.0",
    error: { code: invalidRequest, message },
    id: null
  }, {
    status,
    headers
  })

// Without OAuth the challenge names the scheme only: no `resource_metadata`, so clients use the key.
// With it, the challenge points at the resource's metadata, where clients discover how to sign in.
const challenge = (message: string, resourceMetadata: string | undefined) =>
  refusal(401, message, {
    "www-authenticate": resourceMetadata === undefined
      ? "Bearer realm=\"sightline\""
      : `Bearer realm="sightline", resource_metadata="${resourceMetadata}"`
  })

// The scopes a grant's principal holds; undefined for any other caller (keys and sessions are
// limited by their roles alone).
const grantOf = (principal: Policy.Principal) => principal.auth._tag === "Session" ? principal.auth.grant : undefined

const inScope = (principal: Policy.Principal, tool: McpTools.Tool): boolean =>
  grantOf(principal)?.scopes.includes(tool.scope) ?? true

const bearer = (headers: Readonly<Record<string, string | undefined>>): string | undefined =>
  /^Bearer[ \t]+(.+)$/i.exec(headers["authorization"] ?? "")?.[1]?.trim()

const parsed = Option.liftThrowable((text: string): unknown => JSON.parse(text))

// Whether a message (or a batch) is a request carrying a progress token.
const wantsProgress = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some((message) =>
    typeof message === "object" && message !== null &&
    (message as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta?.progressToken !== undefined
  )

const toolError = (message: string): CallToolResult => ({ content: [{ type: "text", text: message }], isError: true })

/** The endpoint's handler, over the services it needs (captured when the layer is built). */
const make = Effect.gen(function*() {
  const tools = yield* McpTools.make
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  const auditor = yield* Auditor
  const guarded = yield* makeGuarded
  const limiter = yield* RateLimiter.RateLimiter
  const limitConfig = yield* RateLimit.RateLimitConfig
  const auth = yield* Auth.Auth
  // A browser sends `Origin`: only the deployment's own pages and allowed origins may call.
  const originAllowed = yield* PublicUrl.originPolicy
  const allowedOrigin = (request: HttpServerRequest.HttpServerRequest): boolean => {
    const origin = request.headers["origin"]
    return origin === undefined || originAllowed(origin)
  }
  const oauth = Option.isSome(yield* Effect.serviceOption(McpOAuth.McpOAuth))
    ? Option.some({
      tokens: yield* OAuthTokens.OAuthTokens,
      resourceMetadata: McpOAuth.urls(yield* PublicUrl.base).resourceMetadata
    })
    : Option.none()
  const resourceMetadata = Option.getOrUndefined(Option.map(oauth, (o) => o.resourceMetadata))
  // A grant's access token: the member's principal as of now (the grant must still be live),
  // carrying the client and its scopes.
  const grantPrincipal = (token: string) =>
    Option.match(oauth, {
      onNone: () => undefined,
      onSome: ({ tokens }) =>
        OAuthTokens.isOAuthToken(token)
          ? Effect.flatMap(tokens.verify(token), (claims) =>
            Effect.map(
              auth.sessionPrincipal(claims.organizationId, claims.memberId, claims.sessionId),
              (principal): Policy.Principal => ({
                ...principal,
                auth: Policy.Session({ grant: { clientId: claims.clientId, scopes: claims.scopes } })
              })
            ))
          : undefined
    })
  const runtime = yield* Effect.runtime<never>()
  const run = <A>(effect: Effect.Effect<A>) => Runtime.runPromise(runtime)(effect)

  const call = (
    principal: Policy.Principal,
    name: string,
    args: unknown,
    progress: McpTools.Progress
  ): Effect.Effect<CallToolResult> =>
    Effect.gen(function*() {
      const tool = byName.get(name)!
      const grant = grantOf(principal)
      yield* auditor.recordBy(principal, {
        action: "mcp.tool_call",
        resourceType: "organization",
        resourceId: principal.organizationId,
        details: {
          tool: name,
          ...(principal.auth._tag === "ApiKey" ? { api_key_id: principal.auth.keyId } : {}),
          ...(grant === undefined ? {} : { oauth_client_id: grant.clientId })
        }
      })
      if (!inScope(principal, tool)) {
        return toolError(`This client was not granted the ${tool.scope} scope, which ${name} needs`)
      }
      const decoded = Schema.decodeUnknownEither(tool.arguments, { onExcessProperty: "error" })(args ?? {})
      if (Either.isLeft(decoded)) {
        return toolError(`Invalid arguments: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
      }
      const exit = yield* Effect.exit(tool.call(principal, decoded.right, progress))
      if (Exit.isFailure(exit)) {
        const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        if (failure === undefined) return yield* Effect.failCause(exit.cause)
        return toolError(failure.message)
      }
      const { content, structured } = exit.value instanceof McpTools.Rich
        ? exit.value
        : { structured: exit.value, content: [] }
      const result: CallToolResult = {
        content: [{ type: "text", text: JSON.stringify(structured) }, ...content],
        structuredContent: structured
      }
      return result
    }).pipe(Effect.orDie)

  // The tools the caller's organization offers (an admin may turn some off).
  const listed = (principal: Policy.Principal) =>
    Effect.filter(
      tools,
      (tool) =>
        !inScope(principal, tool)
          ? Effect.succeed(false)
          : tool.available === undefined
          ? Effect.succeed(true)
          : tool.available(principal)
    )

  // One SDK server per request: nothing is kept between requests.
  const newServer = (mcp: Sdk, principal: Policy.Principal) => {
    const server = new mcp.Server(
      { name: "sightline", version: "0.1.0" },
      {
        capabilities: { tools: {} },
        instructions: "Sightline answers questions about your organization's data. list_connectors names the data; " +
          "describe_data gives a connector's metrics and dimensions; query_metrics runs a semantic query; run_sql " +
          "runs read-only SQL; ask puts a question in plain words to Sightline's analyst; search_library and " +
          "read_library_file read the Context Library; list_playbooks and run_playbook run saved reports."
      }
    )
    server.setRequestHandler("tools/list", async () => ({
      tools: (await run(listed(principal))).map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: McpTools.inputSchema(tool) as { type: "object" },
        annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: false }
      }))
    }))
    server.setRequestHandler("tools/call", (request, ctx) => {
      // A tool that does not exist is the request's error, not the tool's.
      if (!byName.has(request.params.name)) {
        throw new mcp.ProtocolError(mcp.ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
      }
      const token = request.params._meta?.progressToken
      let step = 0
      const progress: McpTools.Progress = token === undefined
        ? () => Effect.void
        : (message) =>
          Effect.promise(() =>
            ctx.mcpReq.notify({
              method: "notifications/progress",
              params: { progressToken: token, progress: ++step, message }
            }).catch(() => undefined)
          )
      return run(call(principal, request.params.name, request.params.arguments, progress))
    })
    return server
  }

  // The caller travels to the server factory as the request's auth info (the SDK passes it through).
  const authInfo = (principal: Policy.Principal): AuthInfo => ({
    token: "",
    clientId: grantOf(principal)?.clientId ?? "",
    scopes: [...(grantOf(principal)?.scopes ?? [])],
    extra: { principal }
  })
  const principalOf = (info: AuthInfo | undefined) => info?.extra?.["principal"] as Policy.Principal

  // The stateless revision: the SDK's per-request handler (JSON, or an event stream once a tool
  // sends a notification before its result).
  const modernOf = (mcp: Sdk) =>
    mcp.createMcpHandler((ctx) => newServer(mcp, principalOf(ctx.authInfo)), {
      legacy: "reject",
      responseMode: "auto",
      maxRequestBodySize: maxBodyBytes
    })

  let modern: ReturnType<typeof modernOf> | undefined

  const serve = async (request: Request, body: unknown, principal: Policy.Principal): Promise<Response> => {
    const mcp = await sdk()
    if (!(await mcp.isLegacyRequest(request, body, { maxRequestBodySize: maxBodyBytes }))) {
      modern ??= modernOf(mcp)
      return modern.fetch(request, {
        authInfo: authInfo(principal),
        ...(body === undefined ? {} : { parsedBody: body })
      })
    }
    // A 2025 revision, each request on its own: a request that asks for progress is answered as an
    // event stream, which carries the notifications before the result; any other as one JSON response.
    const server = newServer(mcp, principal)
    const streamed = wantsProgress(body)
    // No `sessionIdGenerator`: stateless, so no session ties a client to this process.
    const transport = new mcp.WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !streamed })
    await server.connect(transport)
    const response = await transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body })
    // A stream is still being written: the server goes once its request is answered (nothing else
    // holds it), rather than closing the stream under the tool.
    if (!streamed) await server.close()
    return response
  }

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!allowedOrigin(request)) return refusal(403, "Forbidden: this Origin may not call the MCP server")
    // Stateless: no stream of the server's own messages to open (GET), no session to end (DELETE).
    if (request.method !== "POST") {
      return refusal(405, "Method not allowed: send each JSON-RPC message with POST", { allow: "POST" })
    }
    const token = bearer(request.headers)
    if (token === undefined) {
      return challenge(
        "Authentication required: send Authorization: Bearer <API key or session token>",
        resourceMetadata
      )
    }
    const principal = yield* Effect.either(guarded(request, token, grantPrincipal(token)))
    if (Either.isLeft(principal)) {
      const error = principal.left
      return error instanceof HttpErrors.RateLimitExceeded
        ? refusal(429, error.error.message)
        : error._tag === "Exhausted"
        ? refusal(429, "Too many failed authentications from this address: retry later", {
          "retry-after": String(error.retryAfterSeconds)
        })
        : challenge(error.message, resourceMetadata)
    }
    // Refused before reading, so the server discards the body as it does for /v2; a body of no
    // declared length is refused when the read passes the limit.
    const length = Number(request.headers["content-length"] ?? "0")
    const tooLarge = () =>
      // The connection closes after the answer: the unread body must not hold it open.
      refusal(413, `Request body too large: at most ${maxBodyBytes} bytes`, { connection: "close" })
    if (Number.isFinite(length) && length > maxBodyBytes) return tooLarge()
    const text = yield* Effect.either(
      HttpIncomingMessage.withMaxBodySize(request.text, Option.some(maxBodyBytes))
    )
    if (Either.isLeft(text)) {
      if (text.left._tag === "RequestError" && BodyLimit.isBodyTooLarge(text.left)) return tooLarge()
      return refusal(400, "Bad request: the body could not be read")
    }
    // Read here to see whether the request asks for progress; malformed JSON is left to the SDK,
    // which answers it as JSON-RPC's parse error.
    const body = Option.getOrUndefined(parsed(text.right))
    // A batch is as many calls as it holds messages: the request's own token paid for the first.
    if (Array.isArray(body) && body.length > 1) {
      const limited = yield* Effect.either(
        RateLimit.enforceWith(limiter, limitConfig)(principal.right.organizationId, body.length - 1)
      )
      if (Either.isLeft(limited)) return refusal(429, limited.left.error.message)
    }
    const web = new Request(
      Option.getOrElse(HttpServerRequest.toURL(request), () => new URL(path, "http://localhost")),
      { method: request.method, headers: new Headers(request.headers as Record<string, string>), body: text.right }
    )
    return HttpServerResponse.fromWeb(yield* Effect.promise(() => serve(web, body, principal.right)))
  })
})

/**
 * The MCP endpoint, registered on the `Surfaces` router.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  never,
  never,
  | Answers.Answers
  | Connectors.Connectors
  | SemanticLayer.SemanticLayer
  | Investigations.Investigations
  | Dashboards.Dashboards
  | SqlQueries.SqlQueries
  | Library
  | Playbooks.Playbooks
  | PlaybookRuns.PlaybookRuns
  | AssetUrls
  | Auditor
  | Auth.Auth
  | RateLimiter.RateLimiter
  | RateLimit.RateLimitConfig
  | FailedAuthentications.FailedAuthentications
  | OAuthTokens.OAuthTokens
> = Surfaces.use((router) =>
  Effect.gen(function*() {
    const handle = yield* make
    yield* router.all(path, handle)
  })
)

/**
 * `sightline mcp`: the MCP server for local agents that start their tools as processes (stdio). It
 * relays each JSON-RPC message between its standard input and output and a running server's
 * `/mcp`, with the key from `SVC_API_KEY` as the bearer token, so the agent gets the same tools,
 * permissions and row-level security as over HTTP, and no second process opens the store.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

/** Relays stdio to `url` until standard input ends. */
export const relay = async (url: string, key: string): Promise<void> => {
  const local = new StdioServerTransport()
  const remote = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } }
  })
  // A request the server refused (a revoked key, an unreachable server) still gets its answer.
  const refuse = (message: JSONRPCMessage, error: unknown) =>
    isJSONRPCRequest(message)
      ? local.send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32000, message: error instanceof Error ? error.message : String(error) }
      })
      : Promise.resolve()
  local.onmessage = (message) => void remote.send(message).catch((error) => refuse(message, error))
  remote.onmessage = (message) => void local.send(message)
  const ended = new Promise<void>((resolve) => {
    local.onclose = resolve
    process.stdin.once("end", resolve)
  })
  await remote.start()
  await local.start()
  await ended
  await remote.close()
}

/**
 * Real Connect clients for the server tests. There is no code generation here, so the services are
 * described at runtime: every method takes and returns `google.protobuf.Struct`, whose JSON form is
 * the plain object, which is exactly what the JSON codec puts on the wire.
 */
import { create, createFileRegistry, fromJson, type JsonObject, toJson } from "@bufbuild/protobuf"
import {
  file_google_protobuf_struct,
  FileDescriptorProtoSchema,
  type Struct,
  StructSchema
} from "@bufbuild/protobuf/wkt"
import { type CallOptions, createClient, type Interceptor, type Transport } from "@connectrpc/connect"
import { createConnectTransport } from "@connectrpc/connect-node"
import { request as httpRequest } from "node:http"

const struct = ".google.protobuf.Struct"

const file = (name: string, pkg: string, service: string, methods: ReadonlyArray<string>) =>
  create(FileDescriptorProtoSchema, {
    name,
    package: pkg,
    dependency: ["google/protobuf/struct.proto"],
    syntax: "proto3",
    service: [{
      name: service,
      method: methods.map((method) => ({ name: method, inputType: struct, outputType: struct }))
    }]
  })

const registry = createFileRegistry(
  ...[
    file("svc/rpc/public/app.proto", "svc.rpc.public.app", "AppService", ["GetApp"]),
    file("svc/rpc/public/rbac.proto", "svc.rpc.public.rbac", "RBACService", [
      "MigrateAllScimGroupMappings",
      "ListScimGroupMappings",
      "WhoAmI"
    ]),
    // No package: with base URL `<server>/v1/agents`, the client posts to `/v1/agents/webhook/trigger`.
    file("webhook.proto", "", "webhook", ["trigger"])
  ].map((proto) =>
    createFileRegistry(
      proto,
      (name) => name === "google/protobuf/struct.proto" ? file_google_protobuf_struct : undefined
    )
  )
)

type Call = (request: JsonObject, options?: CallOptions) => Promise<JsonObject>

const client = (typeName: string, transport: Transport) => {
  const service = registry.getService(typeName)
  if (service === undefined) throw new Error(`no service ${typeName}`)
  const methods = createClient(service, transport) as unknown as Record<
    string,
    (request: Struct, options?: CallOptions) => Promise<Struct>
  >
  const call = (method: string): Call => async (request, options) =>
    toJson(StructSchema, await methods[method]!(fromJson(StructSchema, request), options)) as JsonObject
  return call
}

const header = (name: string, value: string | undefined): Array<Interceptor> =>
  value === undefined ? [] : [(next) => (request) => {
    request.header.set(name, value)
    return next(request)
  }]

const transport = (baseUrl: string, interceptors: Array<Interceptor>) =>
  createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors })

/**
 * The public RPC surface as an SDK calls it: the key in `svc_api_key`, under `/rpc/public` unless
 * `prefix` is false (the same procedures are served at the root).
 */
export const rpcClient = (baseUrl: string, key: string | undefined, options: { readonly prefix?: boolean } = {}) => {
  const t = transport(options.prefix === false ? baseUrl : `${baseUrl}/rpc/public`, header("svc_api_key", key))
  const app = client("svc.rpc.public.app.AppService", t)
  const rbac = client("svc.rpc.public.rbac.RBACService", t)
  return {
    getApp: app("getApp"),
    migrateAllScimGroupMappings: rbac("migrateAllScimGroupMappings"),
    listScimGroupMappings: rbac("listScimGroupMappings"),
    whoAmI: rbac("whoAmI")
  }
}

/** The agent webhook as a Connect client calls it, with `Authorization: Bearer <token>`. */
export const webhookClient = (baseUrl: string, token: string | undefined) =>
  client("webhook", transport(`${baseUrl}/v1/agents`, header("authorization", token && `Bearer ${token}`)))("trigger")

/** Headers of a well-formed Connect unary JSON request. */
export const connectHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({
  "content-type": "application/json",
  "connect-protocol-version": "1",
  ...extra
})

/**
 * A request whose body never comes: the server's deadline passes while it waits for the body, so a
 * deadline answer is certain however fast the operation itself is. The socket is dropped once the
 * answer is in.
 */
export const requestWithoutBody = (
  url: string,
  headers: Record<string, string>
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: "POST",
      headers: { ...headers, "transfer-encoding": "chunked" },
      agent: false
    })
    request.on("error", reject)
    request.on("response", (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => text += chunk)
      response.on("end", () => {
        resolve({ status: response.statusCode ?? 0, body: text })
        request.destroy()
      })
    })
    request.flushHeaders()
  })

/**
 * A host application that mounts Sightline in its own `node:http` server. The host keeps its own
 * routes (here `GET /host`) and forwards everything else to Sightline's web-standard handler
 * (`Request → Promise<Response>`), built from the packages' layers: the SQL store on embedded PGlite,
 * core's use cases, and `@sightline/http`'s server layer.
 *
 * The host also keeps a runtime over the same store and use cases, so it can call Sightline directly:
 * here it creates its tenant's organization and an admin key at start; a real host would mint
 * short-lived, role-scoped keys for its users the same way.
 */
import * as Providers from "@sightline/ai/Providers"
import * as ConnectorsRuntime from "@sightline/connectors/Runtime"
import * as ConnectorsTester from "@sightline/connectors/Tester"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as ConnectorFiles from "@sightline/core/ConnectorFiles"
import * as Delivery from "@sightline/core/Delivery"
import * as EventSender from "@sightline/core/EventSender"
import * as IdGenerator from "@sightline/core/IdGenerator"
import * as Organizations from "@sightline/core/Organizations"
import * as SandboxRuntime from "@sightline/core/SandboxRuntime"
import * as UseCases from "@sightline/core/UseCases"
import * as AssetUrls from "@sightline/http/AssetUrls"
import * as Passwords from "@sightline/http/Passwords"
import * as RateLimit from "@sightline/http/RateLimit"
import * as Secrets from "@sightline/http/Secrets"
import * as Server from "@sightline/http/Server"
import * as SqlStore from "@sightline/sql/SqlStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as http from "node:http"
import { Readable } from "node:stream"

/** Sightline's core for this host: embedded PGlite (in memory unless `dataDir`), every use case. */
const core = (dataDir: string | undefined) =>
  UseCases.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        SqlStore.layerPglite({ dataDir, prefix: "sightline_" }),
        IdGenerator.layer,
        // API key secrets hashed with node:crypto in the calling thread.
        Secrets.layer,
        // Sign-in for people: scrypt password hashes.
        Passwords.layer(),
        // The offline model and the live connectors (DEMO included); a host adds its providers here.
        Providers.layer({}),
        ConnectorsRuntime.layer,
        ConnectorsTester.layer,
        // Not configured in this host: they say so instead of pretending.
        Delivery.layerUnconfigured,
        EventSender.layerUnconfigured,
        ConnectorFiles.layerUnconfigured,
        SandboxRuntime.layerUnconfigured
      )
    )
  )

/** A running host. */
export interface Host {
  readonly url: string
  /** The admin key of the tenant organization the host created. */
  readonly adminKey: string
  readonly close: () => Promise<void>
}

/** Starts the host on `port` (0: any free port). */
export const start = async (options: { readonly port?: number; readonly dataDir?: string } = {}): Promise<Host> => {
  const runtime = ManagedRuntime.make(core(options.dataDir))
  const { context } = await runtime.runtime()
  const { dispose, handler } = Server.toWebHandler(
    Server.layer.pipe(
      Layer.provide(
        Layer.mergeAll(Server.layerReadinessAlways, RateLimit.layer(RateLimit.perMinute(600)), AssetUrls.layerEphemeral)
      ),
      Layer.provide(Layer.succeedContext(context))
    )
  )
  const { adminKey } = await runtime.runPromise(Effect.gen(function*() {
    const { admin, organization } = yield* (yield* Organizations.Organizations).create({
      name: "Host tenant",
      adminEmail: "admin@host.example"
    })
    const { key } = yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "host")
    return { adminKey: key }
  }))

  const server = http.createServer(async (request, response) => {
    if (request.url === "/host") {
      response.writeHead(200, { "content-type": "text/plain" }).end("the host's own page")
      return
    }
    // Everything else is Sightline's: convert to a web Request and back.
    const url = `http://${request.headers.host ?? "localhost"}${request.url ?? "/"}`
    const hasBody = request.method !== "GET" && request.method !== "HEAD"
    const answer = await handler(
      new Request(url, {
        method: request.method!,
        headers: request.headers as Record<string, string>,
        ...(hasBody ? { body: Readable.toWeb(request) as ReadableStream, duplex: "half" } : {})
      } as RequestInit)
    )
    response.writeHead(answer.status, Object.fromEntries(answer.headers))
    if (answer.body === null) response.end()
    else Readable.fromWeb(answer.body as any).pipe(response)
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const address = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    adminKey,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await dispose()
      await runtime.dispose()
    }
  }
}

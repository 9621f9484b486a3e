/**
 * A real OpenID Provider on loopback (`oidc-provider`, with its development login and consent pages):
 * any login name is accepted, and the account's e-mail address is that name.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"

export interface TestProvider {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  readonly close: () => Promise<void>
}

export const start = async (redirectUri: string): Promise<TestProvider> => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const issuer = `http://localhost:${port}`
  const clientId = "sightline-console"
  const clientSecret = "a client secret for loopback tests only"
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"]
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: id, email_verified: true })
    }),
    cookies: { keys: ["loopback test cookie key"] },
    features: { devInteractions: { enabled: true } }
  })
  server.on("request", provider.callback())
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

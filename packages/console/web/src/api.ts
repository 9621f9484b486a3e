/**
 * The console's only way to the server: the public /v2 API. The access token lives in memory only
 * (never in storage a script could read later); the refresh token is an HttpOnly cookie the browser
 * sends to /v2/auth alone. Every call renews the access token shortly before it expires.
 */

export interface Session {
  readonly accessToken: string
  readonly expiresAt: number
  readonly memberId: string
  readonly organizationId: string
}

export interface Me {
  readonly member_id: string
  readonly organization_id: string
  readonly email: string
  readonly name: string
  readonly roles: ReadonlyArray<string>
  readonly permissions: ReadonlyArray<string>
  readonly is_admin: boolean
}

/** An API answer that is not 2xx, with the envelope's message. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

let current: Session | undefined
let renewing: Promise<Session | undefined> | undefined
const listeners = new Set<(session: Session | undefined) => void>()

const publish = (session: Session | undefined) => {
  current = session
  for (const listener of listeners) listener(session)
}

/** Calls `listener` whenever the session starts or ends. */
export const onSession = (listener: (session: Session | undefined) => void): () => void => {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

const fromToken = (body: any): Session => ({
  accessToken: body.access_token,
  // Renew a minute early: a request sent just before expiry must not arrive just after.
  expiresAt: Date.now() + (body.expires_in - 60) * 1000,
  memberId: body.member_id,
  organizationId: body.organization_id
})

const errorOf = async (response: Response): Promise<ApiError> => {
  const text = await response.text()
  try {
    const body = JSON.parse(text)
    return new ApiError(response.status, body.error?.code ?? "error", body.error?.message ?? text)
  } catch {
    return new ApiError(response.status, "error", text || response.statusText)
  }
}

const authPost = async (path: string, json?: unknown): Promise<Response> =>
  fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: json === undefined ? {} : { "content-type": "application/json" },
    body: json === undefined ? null : JSON.stringify(json)
  })

const signedIn = async (response: Response): Promise<Session> => {
  if (!response.ok) throw await errorOf(response)
  const session = fromToken(await response.json())
  publish(session)
  return session
}

export const signIn = (email: string, password: string) =>
  authPost("v2/auth/sign-in", { email, password }).then(signedIn)

export const setPassword = (token: string, password: string) =>
  authPost("v2/auth/password", { token, password }).then(signedIn)

/**
 * Renews the session with the refresh cookie. Another tab may have renewed with the same cookie a
 * moment ago (the server then refuses this one without ending the session), so a refusal is tried
 * once more with the cookie that tab left.
 */
export const renew = (): Promise<Session | undefined> => {
  renewing ??= (async () => {
    const before = current
    for (const delay of [0, 400]) {
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
      const response = await authPost("v2/auth/refresh")
      // 204: no refresh cookie, so no session to renew and no other tab's renewal to wait for.
      if (response.status === 204) break
      if (response.ok) return signedIn(response)
      if (response.status !== 401) throw await errorOf(response)
    }
    // A sign-in (or a set password) that completed while this renewal was refused stands: the page
    // renews on load, and someone quick, or a slow network, signs in before it has given up.
    if (current !== before) return current
    publish(undefined)
    return undefined
  })().finally(() => {
    renewing = undefined
  })
  return renewing
}

export const signOut = async () => {
  await authPost("v2/auth/sign-out")
  publish(undefined)
}

const validSession = async (): Promise<Session | undefined> =>
  current !== undefined && current.expiresAt > Date.now() ? current : renew()

/** A /v2 request with the session's token; renews once on 401. `path` is relative (`v2/chats`). */
export const request = async (path: string, init: RequestInit = {}): Promise<Response> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    const session = attempt === 0 ? await validSession() : await renew()
    if (session === undefined) throw new ApiError(401, "unauthenticated", "Signed out")
    const headers = new Headers(init.headers)
    headers.set("authorization", `Bearer ${session.accessToken}`)
    const response = await fetch(path, { ...init, headers })
    if (response.status !== 401 || attempt === 1) return response
  }
  throw new ApiError(401, "unauthenticated", "Signed out")
}

/** A JSON request: the parsed body, or an `ApiError`. */
export const json = async <A = any>(
  path: string,
  init: Omit<RequestInit, "body"> & { readonly body?: unknown } = {}
): Promise<A> => {
  const { body, ...rest } = init
  const headers = new Headers(rest.headers)
  let sent: BodyInit | null = null
  if (body instanceof FormData || typeof body === "string") sent = body
  else if (body !== undefined) {
    headers.set("content-type", "application/json")
    sent = JSON.stringify(body)
  }
  const response = await request(path, { ...rest, headers, body: sent })
  if (!response.ok) throw await errorOf(response)
  if (response.status === 204) return undefined as A
  return response.json()
}

export const me = (): Promise<Me> => json<Me>("v2/members/me")

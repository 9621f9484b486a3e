/**
 * The refresh cookie's one rule: `HttpOnly` (no script reads it), `Secure`, `SameSite=Strict`, sent
 * only to `/v2/auth`, and gone when the refresh token expires.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { refreshCookie, refreshCookiePath } from "../AuthApi.js"

/** `response` setting the refresh cookie to `value` until `expires` (the epoch clears it). */
export const withRefreshCookie = (
  response: HttpServerResponse.HttpServerResponse,
  value: string,
  expires: Date
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeSetCookie(response, refreshCookie, value, {
    httpOnly: true,
    secure: true,
    sameSite: "strict",
    path: refreshCookiePath,
    expires
  })

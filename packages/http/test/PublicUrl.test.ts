import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as PublicUrl from "../src/PublicUrl.js"

describe("PublicUrl.originAllowed", () => {
  it("allows the public URL's origin and the allowed ones, compared as origins", () => {
    const deployment = {
      publicUrl: Option.some("https://analytics.example.com/base"),
      allowed: ["https://app.example.org", "not a url"]
    }
    expect(PublicUrl.originAllowed("https://analytics.example.com", deployment)).toBe(true)
    expect(PublicUrl.originAllowed("https://app.example.org", deployment)).toBe(true)
    for (
      const origin of [
        "http://analytics.example.com",
        "https://analytics.example.com:8443",
        "https://evil.example",
        "http://localhost:8787",
        "null",
        ""
      ]
    ) expect([origin, PublicUrl.originAllowed(origin, deployment)]).toEqual([origin, false])
  })

  it("allows loopback pages only where no public URL is configured", () => {
    const deployment = { publicUrl: Option.none(), allowed: [] }
    for (const origin of ["http://localhost:8787", "http://127.0.0.1:3000", "http://[::1]:8787"]) {
      expect([origin, PublicUrl.originAllowed(origin, deployment)]).toEqual([origin, true])
    }
    for (const origin of ["https://localhost.evil.example", "http://rebound.example:8787", "http://10.0.0.1"]) {
      expect([origin, PublicUrl.originAllowed(origin, deployment)]).toEqual([origin, false])
    }
  })
})

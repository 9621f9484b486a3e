/**
 * The delivery transport with e-mail over a real SMTP server on loopback (`smtp-server`): messages
 * with their HTML, text and inline image parts, a refused recipient that does not stop the others,
 * a transient refusal that is retried, and targets whose transport cannot deliver them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChatChannelRepo from "@sightline/core/ChatChannelRepo"
import * as Delivery from "@sightline/core/Delivery"
import { OrganizationId } from "@sightline/core/Ids"
import * as Transaction from "@sightline/core/Transaction"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import type * as Smtp from "../src/Smtp.js"
import * as Transport from "../src/Transport.js"

interface Received {
  readonly to: ReadonlyArray<string>
  readonly raw: string
}

/** A loopback SMTP server; `refuse` answers RCPT TO with a code for an address (undefined: accept). */
const smtpServer = (refuse: (address: string, attempt: number) => number | undefined = () => undefined) =>
  Effect.acquireRelease(
    Effect.async<{ port: number; received: Array<Received>; server: SMTPServer }>((resume) => {
      const received: Array<Received> = []
      const attempts = new Map<string, number>()
      const server = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS"],
        onRcptTo(address, _session, callback) {
          const attempt = (attempts.get(address.address) ?? 0) + 1
          attempts.set(address.address, attempt)
          const code = refuse(address.address, attempt)
          if (code === undefined) return callback()
          const error = Object.assign(new Error(`mailbox ${address.address} unavailable`), { responseCode: code })
          callback(error)
        },
        onData(stream, session, callback) {
          const chunks: Array<Buffer> = []
          stream.on("data", (chunk: Buffer) => chunks.push(chunk))
          stream.on("end", () => {
            received.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              raw: Buffer.concat(chunks).toString("utf8")
            })
            callback()
          })
        }
      })
      server.listen(0, "127.0.0.1", () => {
        resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server }))
      })
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

const request = (
  emails: ReadonlyArray<string>,
  extra: Partial<Delivery.DeliveryRequest> = {}
): Delivery.DeliveryRequest => ({
  organizationId: OrganizationId.make("00000000-0000-4000-8000-000000000001"),
  subject: "Weekly revenue\r\nBcc: attacker@example.com",
  html: `<p>Revenue grew.</p><img src="cid:chart-1@sightline">`,
  text: "Revenue grew.",
  images: [{
    cid: "chart-1@sightline",
    filename: "chart-1.png",
    mimeType: "image/png",
    bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])
  }],
  targets: { emails },
  ...extra
})

// The transport over an (empty) channel registry in memory.
const transport = (smtp?: Smtp.Options) =>
  Effect.provide(
    Transport.make({ smtp }),
    ChatChannelRepo.layerMemory.pipe(Layer.provide(Transaction.layerMemory))
  )

// Live clock: the backoff between attempts really sleeps.
describe("Transport", () => {
  it.scopedLive("sends each address its own message with HTML, text and the chart inline; a refused one fails alone", () =>
    Effect.gen(function*() {
      const smtp = yield* smtpServer((address) => address.startsWith("nobody@") ? 550 : undefined)
      const delivery = yield* transport({
        url: Redacted.make(`smtp://127.0.0.1:${smtp.port}`),
        from: "Sightline <reports@sightline.test>",
        backoffMillis: 10
      })
      const results = yield* delivery.deliver(
        request(["ana@example.com", "nobody@example.com", "bo@example.com", "not an address"])
      )
      expect(results.map((r) => r._tag)).toEqual(["Delivered", "Failed", "Delivered", "Failed"])
      expect((results[1] as Delivery.Failed).reason).toMatch(/^the mail server refused it: .*550/)
      expect((results[3] as Delivery.Failed).reason).toContain("invalid e-mail address")
      expect(smtp.received.map((m) => m.to)).toEqual([["ana@example.com"], ["bo@example.com"]])
      const raw = smtp.received[0]!.raw
      // The line break of the subject did not become a header.
      expect(raw).toMatch(/^Subject: Weekly revenue Bcc: attacker@example.com\r?$/m)
      expect(raw).not.toMatch(/^Bcc:/m)
      expect(raw).toMatch(/^From: Sightline <reports@sightline.test>\r?$/m)
      expect(raw).toContain("Content-Type: text/plain")
      expect(raw).toContain("Content-Type: text/html")
      expect(raw).toMatch(/Content-Type: image\/png; name=chart-1.png/)
      expect(raw).toContain("Content-ID: <chart-1@sightline>")
      expect(raw).toContain("Content-Disposition: inline")
      expect(raw).toContain(Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]).toString("base64"))
    }))

  it.scopedLive("retries a transient refusal (4xx) and delivers once", () =>
    Effect.gen(function*() {
      const smtp = yield* smtpServer((_, attempt) => attempt <= 2 ? 451 : undefined)
      const delivery = yield* transport({
        url: Redacted.make(`smtp://127.0.0.1:${smtp.port}`),
        from: "reports@sightline.test",
        backoffMillis: 10
      })
      const results = yield* delivery.deliver(request(["ana@example.com"]))
      expect(results.map((r) => r._tag)).toEqual(["Delivered"])
      expect(smtp.received).toHaveLength(1)
    }))

  it.scopedLive("says so when the server cannot be reached, and a channel the organization does not have fails alone", () =>
    Effect.gen(function*() {
      const smtp = yield* smtpServer()
      const port = smtp.port
      yield* Effect.promise(() => new Promise<void>((resolve) => smtp.server.close(() => resolve())))
      const delivery = yield* transport({
        url: Redacted.make(`smtp://127.0.0.1:${port}`),
        from: "reports@sightline.test",
        attempts: 2,
        backoffMillis: 10,
        timeoutMillis: 2_000
      })
      const results = yield* delivery.deliver(request(["ana@example.com"], {
        targets: { emails: ["ana@example.com"], chatChannelId: "ops" }
      }))
      expect(results.map((r) => r._tag)).toEqual(["Failed", "Failed"])
      expect((results[0] as Delivery.Failed).reason).toMatch(/^the mail server could not be reached/)
      expect(results[1]).toEqual(Delivery.Failed.make({
        target: Delivery.ChatChannelTarget.make({ channelId: "ops" }),
        reason: "no chat channel ops in this organization"
      }))
    }))

  it.scoped("without SMTP, every e-mail target fails saying e-mail is not configured", () =>
    Effect.gen(function*() {
      const delivery = yield* transport()
      const results = yield* delivery.deliver(request(["ana@example.com", "bo@example.com"]))
      expect(results).toEqual(["ana@example.com", "bo@example.com"].map((address) =>
        Delivery.Failed.make({ target: Delivery.EmailTarget.make({ address }), reason: Transport.noSmtpReason })
      ))
    }))
})

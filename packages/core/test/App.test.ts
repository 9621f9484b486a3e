import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as App from "../src/App.js"
import { AppId, ChatId, MemberId, OrganizationId } from "../src/Ids.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const t0 = DateTime.unsafeMake("2026-03-01T10:00:00.000Z")

const errorOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string =>
  Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: (e) => e.message, onRight: () => "decoded" })

const makeApp = (request: unknown) =>
  App.make({
    id: AppId.make(id(1)),
    organizationId: OrganizationId.make(id(2)),
    ownerId: MemberId.make(id(3)),
    request: Schema.decodeUnknownSync(App.CreateRequest)(request),
    at: t0
  })

describe("App.CreateRequest", () => {
  it("needs a name and code; description, files, data sources and chat are optional", () => {
    expect(errorOf(App.CreateRequest, { name: "Board", code: "" })).toBe("decoded")
    expect(errorOf(App.CreateRequest, { code: "x" })).toContain("name")
    expect(errorOf(App.CreateRequest, { name: "Board" })).toContain("code")
    expect(errorOf(App.CreateRequest, { name: " ", code: "x" })).not.toBe("decoded")
    expect(errorOf(App.CreateRequest, { name: "Board", code: "x", chatId: "chat-1" })).not.toBe("decoded")
  })

  it("rejects a file path that leaves the app, hides a dotfile or names OWNERS, saying which", () => {
    for (const path of ["../escape.py", "/abs.py", ".env", "lib/OWNERS"]) {
      expect(errorOf(App.CreateRequest, { name: "Board", code: "x", files: { "ok.py": "", [path]: "" } })).toContain(
        `invalid file path ${JSON.stringify(path)}`
      )
    }
    expect(errorOf(App.CreateRequest, { name: "Board", code: "x", files: { "pages/a.py": "1" } })).toBe("decoded")
  })
})

describe("App.make", () => {
  it("defaults the description, files and data sources to empty", () => {
    const app = makeApp({ name: "Board", code: "print(1)" })
    expect(app).toMatchObject({ description: "", files: {}, data_sources: [], created_at: t0, updated_at: t0 })
    expect("chat_id" in app).toBe(false)
  })
})

describe("App.toView and GetApp", () => {
  it("serves the app in camelCase with ISO timestamps", () => {
    const app = makeApp({
      name: "Board",
      description: "Revenue",
      code: "print(1)",
      files: { "a.py": "1" },
      dataSources: [5],
      chatId: id(9)
    })
    const response = Schema.encodeSync(App.GetAppResponse)({ app: App.toView(app), hasWritePermission: true })
    expect(response).toEqual({
      app: {
        id: id(1),
        name: "Board",
        description: "Revenue",
        code: "print(1)",
        files: { "a.py": "1" },
        dataSources: [5],
        chatId: ChatId.make(id(9)),
        createdAt: "2026-03-01T10:00:00.000Z",
        updatedAt: "2026-03-01T10:00:00.000Z"
      },
      hasWritePermission: true
    })
  })

  it("omits chatId when the app has no chat", () => {
    expect(App.toView(makeApp({ name: "Board", code: "" }))).not.toHaveProperty("chatId")
  })

  it("GetApp takes an app id that is a UUID", () => {
    expect(Schema.decodeUnknownSync(App.GetAppRequest)({ appId: id(1) })).toEqual({ appId: id(1) })
    expect(errorOf(App.GetAppRequest, { appId: "app-1" })).not.toBe("decoded")
    expect(errorOf(App.GetAppRequest, {})).toContain("appId")
  })
})

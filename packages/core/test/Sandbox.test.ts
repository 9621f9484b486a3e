import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { ChatId, MemberId, OrganizationId, SandboxId } from "../src/Ids.js"
import * as Sandbox from "../src/Sandbox.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const owner = MemberId.make(id(1))
const stranger = MemberId.make(id(2))
const t0 = DateTime.unsafeMake("2026-03-01T10:00:00.000Z")

const running = Sandbox.make({
  sandboxId: SandboxId.make(id(10)),
  organizationId: OrganizationId.make(id(20)),
  memberId: owner,
  chatId: ChatId.make(id(30)),
  at: t0
})

const errorOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string =>
  Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: (e) => e.message, onRight: () => "decoded" })

describe("Sandbox lifecycle", () => {
  it("a new sandbox runs, owned by its creator, with no release or heartbeat", () => {
    expect(running).toMatchObject({ status: "running", member_id: owner, started_at: t0 })
    expect(running.released_at).toBeUndefined()
    expect(running.last_seen_at).toBeUndefined()
  })

  it("stop releases a running sandbox and is idempotent on a stopped one", () => {
    const t1 = DateTime.add(t0, { hours: 1 })
    const stopped = Sandbox.stop(running, t1)
    expect(stopped).toMatchObject({ status: "stopped", released_at: t1, started_at: t0 })
    const again = Sandbox.stop(stopped, DateTime.add(t1, { hours: 1 }))
    expect(again.released_at).toEqual(t1)
    expect(again.status).toBe("stopped")
  })

  const placement = { runnerId: "r1", libraryRef: undefined }

  it("restart by the owner runs a stopped sandbox again with a fresh start and no release", () => {
    const seen = Sandbox.heartbeat(running, DateTime.add(t0, { minutes: 1 }))
    const stopped = Sandbox.stop(seen, DateTime.add(t0, { hours: 1 }))
    const t2 = DateTime.add(t0, { hours: 2 })
    const restarted = Either.getOrThrow(Sandbox.restart(stopped, owner, t2, { runnerId: "r2", libraryRef: undefined }))
    expect(restarted).toMatchObject({
      status: "running",
      started_at: t2,
      sandbox_id: running.sandbox_id,
      runner_id: "r2"
    })
    expect("released_at" in restarted).toBe(false)
    expect("last_seen_at" in restarted).toBe(false)
    expect(restarted.chat_id).toBe(running.chat_id)
  })

  it("restart by anyone but the owner is denied, running or stopped", () => {
    for (const sandbox of [running, Sandbox.stop(running, t0)]) {
      const result = Sandbox.restart(sandbox, stranger, DateTime.add(t0, { hours: 1 }), placement)
      expect(Either.isLeft(result) && result.left._tag).toBe("PermissionDenied")
    }
  })

  it("restarting one's own running sandbox changes nothing", () => {
    expect(Either.getOrThrow(Sandbox.restart(running, owner, DateTime.add(t0, { hours: 1 }), placement))).toBe(running)
  })

  it("a heartbeat refreshes a running sandbox but never revives a stopped one", () => {
    const t1 = DateTime.add(t0, { minutes: 3 })
    expect(Sandbox.heartbeat(running, t1).last_seen_at).toEqual(t1)
    const stopped = Sandbox.stop(running, t1)
    expect(Sandbox.heartbeat(stopped, DateTime.add(t1, { minutes: 1 }))).toBe(stopped)
  })
})

describe("Sandbox.listedStatus", () => {
  const after = (d: Duration.Duration, millis = 0) => DateTime.add(t0, { millis: Duration.toMillis(d) + millis })

  it("is running up to STALE_AFTER of silence, stale up to UNKNOWN_AFTER, then unknown", () => {
    expect(Sandbox.listedStatus(running, t0)).toBe("running")
    expect(Sandbox.listedStatus(running, after(Sandbox.STALE_AFTER))).toBe("running")
    expect(Sandbox.listedStatus(running, after(Sandbox.STALE_AFTER, 1))).toBe("stale")
    expect(Sandbox.listedStatus(running, after(Sandbox.UNKNOWN_AFTER))).toBe("stale")
    expect(Sandbox.listedStatus(running, after(Sandbox.UNKNOWN_AFTER, 1))).toBe("unknown")
  })

  it("measures silence from the last heartbeat when there is one", () => {
    const seen = Sandbox.heartbeat(running, after(Sandbox.UNKNOWN_AFTER))
    expect(Sandbox.listedStatus(seen, after(Sandbox.UNKNOWN_AFTER, 1))).toBe("running")
    expect(Sandbox.listedStatus(seen, DateTime.add(after(Sandbox.UNKNOWN_AFTER), { minutes: 6 }))).toBe("stale")
  })

  it("a heartbeat ahead of the reader's clock counts as fresh", () => {
    expect(Sandbox.listedStatus(Sandbox.heartbeat(running, DateTime.add(t0, { seconds: 5 })), t0)).toBe("running")
  })

  it("a stopped sandbox is stopped whatever its heartbeat", () => {
    expect(Sandbox.listedStatus(Sandbox.stop(running, t0), DateTime.add(t0, { days: 3 }))).toBe("stopped")
  })

  it("summary serves the listed status and only the listed fields", () => {
    const seen = Sandbox.heartbeat(running, DateTime.add(t0, { minutes: 1 }))
    const encoded = Schema.encodeSync(Sandbox.Summary)(Sandbox.summary(seen, DateTime.add(t0, { minutes: 30 })))
    expect(encoded).toEqual({
      sandbox_id: running.sandbox_id,
      status: "stale",
      member_id: owner,
      chat_id: running.chat_id,
      started_at: "2026-03-01T10:00:00.000Z"
    })
  })
})

describe("Sandbox file paths", () => {
  it("accepts relative paths of visible files", () => {
    for (const path of ["a.csv", "dir/sub/file.py", "library/finance/revenue.sql", "owners/list.csv", "x..y"]) {
      expect(errorOf(Sandbox.FilePath, path)).toBe("decoded")
    }
  })

  it.each([
    ["", "must not be empty"],
    ["/etc/passwd", "must be relative"],
    ["../secret", ". or .. segments"],
    ["a/../../b", ". or .. segments"],
    ["a/./b", ". or .. segments"],
    ["a//b", "empty segments"],
    ["a/", "empty segments"],
    [".env", "dotfiles"],
    ["dir/.git/config", "dotfiles"],
    ["OWNERS", "OWNERS files are never served"],
    ["library/team/OWNERS", "OWNERS files are never served"],
    ["library/team/owners", "OWNERS files are never served"],
    ["a\\..\\b", "backslashes or control characters"],
    ["a\u0000b", "backslashes or control characters"],
    ["x".repeat(Sandbox.MAX_PATH_LENGTH + 1), "at most 1024 characters"]
  ])("rejects %j (%s)", (path, reason) => {
    expect(errorOf(Sandbox.FilePath, path)).toContain(reason)
  })

  it.prop(
    "no path with a .. segment is ever accepted",
    [FastCheck.array(FastCheck.constantFrom("a", "b.txt", "..", "dir", "x y"), { minLength: 1, maxLength: 6 })],
    ([segments]) => {
      const path = segments.join("/")
      expect(Schema.is(Sandbox.FilePath)(path)).toBe(!segments.includes(".."))
    }
  )

  it("a directory path may end with a slash and may be named OWNERS", () => {
    for (const path of ["library/", "library/team", "data/OWNERS/"]) {
      expect(errorOf(Sandbox.DirectoryPath, path)).toBe("decoded")
    }
    for (const path of ["../", "/", "library//", ".git/"]) {
      expect(errorOf(Sandbox.DirectoryPath, path)).not.toBe("decoded")
    }
    expect(errorOf(Sandbox.ListFilesParams, { path: "../x" })).toContain(". or .. segments")
  })
})

describe("Sandbox request schemas", () => {
  it("list params default to running, 50, and bound the limit to 1..200", () => {
    expect(Schema.decodeUnknownSync(Sandbox.ListParams)({})).toEqual({ status: "running", limit: 50 })
    expect(Schema.decodeUnknownSync(Sandbox.ListParams)({ status: "all", limit: "200", cursor: "c" })).toEqual({
      status: "all",
      limit: 200,
      cursor: "c"
    })
    for (const query of [{ limit: "0" }, { limit: "201" }, { limit: "1.5" }, { status: "stale" }]) {
      expect(errorOf(Sandbox.ListParams, query)).not.toBe("decoded")
    }
  })

  it("a query takes exactly one of query and library_path", () => {
    const base = { connector_id: 1 }
    expect(errorOf(Sandbox.QueryRequest, { ...base, query: "select 1" })).toBe("decoded")
    expect(errorOf(Sandbox.QueryRequest, { ...base, library_path: "finance/revenue.sql" })).toBe("decoded")
    expect(errorOf(Sandbox.QueryRequest, { ...base, query: "select 1", library_path: "a.sql" })).toContain(
      "set exactly one of query and library_path, not both"
    )
    expect(errorOf(Sandbox.QueryRequest, base)).toContain("one of query or library_path is required")
  })

  it("a query's library path names a visible .sql file and its dataframe name is an identifier", () => {
    const base = { connector_id: 1 }
    expect(errorOf(Sandbox.QueryRequest, { ...base, library_path: "finance/revenue.csv" })).toContain(".sql file")
    expect(errorOf(Sandbox.QueryRequest, { ...base, library_path: "../other/x.sql" })).toContain(". or ..")
    expect(errorOf(Sandbox.QueryRequest, { ...base, query: "select 1", dataframe_name: "1df" })).toContain(
      "Python identifier"
    )
    expect(
      Schema.decodeUnknownSync(Sandbox.QueryRequest)({
        ...base,
        query: "select * from t where id = :id",
        params: { id: 3, name: "x", flag: true, none: null },
        max_rows: 1000,
        dataframe_name: "df_2"
      })
    ).toMatchObject({ params: { id: 3, name: "x", flag: true, none: null }, max_rows: 1000, dataframe_name: "df_2" })
    expect(errorOf(Sandbox.QueryRequest, { ...base, query: "select 1", params: { ids: [1, 2] } })).not.toBe("decoded")
    expect(errorOf(Sandbox.QueryRequest, { ...base, query: "select 1", max_rows: 0 })).not.toBe("decoded")
  })

  it("exec defaults to bash and rejects invalid environment variable names", () => {
    expect(Schema.decodeUnknownSync(Sandbox.ExecRequest)({ command: "ls" })).toEqual({ command: "ls", kind: "bash" })
    expect(Schema.decodeUnknownSync(Sandbox.ExecRequest)({ command: "print(1)", kind: "python", env: { A_1: "x" } }))
      .toEqual({ command: "print(1)", kind: "python", env: { A_1: "x" } })
    expect(errorOf(Sandbox.ExecRequest, { command: "ls", env: { "1BAD": "x" } })).toContain(
      "invalid environment variable name: \"1BAD\""
    )
    expect(errorOf(Sandbox.ExecRequest, { command: "" })).not.toBe("decoded")
    expect(errorOf(Sandbox.ExecRequest, { command: "ls", kind: "ruby" })).not.toBe("decoded")
  })

  it("an execute response allows null output and omits an absent error", () => {
    const response: Sandbox.ExecuteResponse = { output: null, execution_time_ms: 3, files: [], dataframes: [] }
    expect(Schema.encodeSync(Sandbox.ExecuteResponse)(response)).toEqual(response)
  })
})

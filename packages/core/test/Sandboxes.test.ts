import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as Auditor from "../src/Auditor.js"
import * as Auth from "../src/Auth.js"
import * as Change from "../src/Change.js"
import * as Changes from "../src/Changes.js"
import * as ConnectorRuntime from "../src/ConnectorRuntime.js"
import * as Execution from "../src/Execution.js"
import { ExecutionRepo } from "../src/ExecutionRepo.js"
import { ExecutionId, type MemberId, type OrganizationId, SandboxId } from "../src/Ids.js"
import * as Library from "../src/Library.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import type * as Policy from "../src/Policy.js"
import * as Sandbox from "../src/Sandbox.js"
import * as Sandboxes from "../src/Sandboxes.js"
import { SandboxRepo } from "../src/SandboxRepo.js"
import * as SandboxRuntime from "../src/SandboxRuntime.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Sandboxes.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Organizations.layer, Members.layer, Changes.layer)),
  Layer.provideMerge(Library.layer),
  Layer.provideMerge(Auth.layer),
  Layer.provideMerge(Auditor.layer),
  Layer.provideMerge(Layer.merge(Memory.layer, ConnectorRuntime.layerMemory([])))
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const startSandbox = (organizationId: OrganizationId, memberId: MemberId) =>
  Effect.gen(function*() {
    const sandbox = Sandbox.make({
      sandboxId: SandboxId.make(Fixtures.uuid()),
      organizationId,
      memberId,
      at: yield* DateTime.now
    })
    yield* (yield* SandboxRepo).create(sandbox)
    yield* TestClock.adjust("1 second")
    return sandbox
  })

const record = (sandbox: Sandbox.Sandbox, input: string) =>
  Effect.gen(function*() {
    yield* (yield* ExecutionRepo).record(
      new Execution.Execution({
        id: ExecutionId.make(Fixtures.uuid()),
        kind: "python",
        source: "platform_api",
        input,
        output_preview: `ran ${input}`,
        duration_ms: 3,
        created_at: yield* DateTime.now,
        organization_id: sandbox.organization_id,
        sandbox_id: sandbox.sandbox_id
      })
    )
    yield* TestClock.adjust("1 second")
  })

const setup = Effect.gen(function*() {
  const { admin, org } = yield* Fixtures.organizationWithAdmin()
  const { member_id } = yield* (yield* Members.Members).invite(admin, { email: "bob@acme.example", role: "member" })
  const bob = yield* Fixtures.principal(org, member_id)
  const adminBox = yield* startSandbox(org, admin.memberId)
  const bobBox = yield* startSandbox(org, bob.memberId)
  return { admin, bob, adminBox, bobBox }
})

describe("Sandboxes.list", () => {
  it.effect("lists a member's own sandboxes, and every member's to an admin, newest first", () =>
    run(Effect.gen(function*() {
      const { admin, adminBox, bob, bobBox } = yield* setup
      const sandboxes = yield* Sandboxes.Sandboxes
      const own = yield* sandboxes.list(bob, { status: "running", limit: 50 })
      expect(own.sandboxes.map((s) => s.sandbox_id)).toEqual([bobBox.sandbox_id])
      expect(own.sandboxes[0]).toMatchObject({ status: "running", member_id: bob.memberId })
      expect(own.sandboxes[0]).not.toHaveProperty("organization_id")
      const all = yield* sandboxes.list(admin, { status: "all", limit: 50 })
      expect(all.sandboxes.map((s) => s.sandbox_id)).toEqual([bobBox.sandbox_id, adminBox.sandbox_id])
    })))

  it.effect("pages by cursor and refuses a forged one", () =>
    run(Effect.gen(function*() {
      const { admin, adminBox, bobBox } = yield* setup
      const sandboxes = yield* Sandboxes.Sandboxes
      const first = yield* sandboxes.list(admin, { status: "all", limit: 1 })
      expect(first.sandboxes.map((s) => s.sandbox_id)).toEqual([bobBox.sandbox_id])
      expect(first.next_cursor).toBeTypeOf("string")
      const second = yield* sandboxes.list(admin, { status: "all", limit: 1, cursor: first.next_cursor! })
      expect(second.sandboxes.map((s) => s.sandbox_id)).toEqual([adminBox.sandbox_id])
      expect(second.next_cursor).toBeUndefined()
      const forged = yield* Effect.flip(sandboxes.list(admin, { status: "all", limit: 1, cursor: "bm9wZQ" }))
      expect(forged._tag).toBe("InvalidRequest")
    })))
})

describe("Sandboxes.executions", () => {
  it.effect("lists a sandbox's executions newest first, without internal fields", () =>
    run(Effect.gen(function*() {
      const { bob, bobBox } = yield* setup
      yield* record(bobBox, "1 + 1")
      yield* record(bobBox, "2 + 2")
      const page = yield* (yield* Sandboxes.Sandboxes).executions(bob, bobBox.sandbox_id, { limit: 50 })
      expect(page.executions.map((e) => e.input)).toEqual(["2 + 2", "1 + 1"])
      expect(page.executions[0]).not.toHaveProperty("organization_id")
      expect(page.executions[0]).not.toHaveProperty("sandbox_id")
    })))

  it.effect("hides another member's sandbox from a member (not found) but not from an admin", () =>
    run(Effect.gen(function*() {
      const { admin, adminBox, bob, bobBox } = yield* setup
      yield* record(bobBox, "secret work")
      const sandboxes = yield* Sandboxes.Sandboxes
      const hidden = yield* Effect.flip(sandboxes.executions(bob, adminBox.sandbox_id, { limit: 50 }))
      expect(hidden._tag).toBe("NotFound")
      const seen = yield* sandboxes.executions(admin, bobBox.sandbox_id, { limit: 50 })
      expect(seen.executions).toHaveLength(1)
      const unknown = yield* Effect.flip(sandboxes.executions(admin, SandboxId.make(Fixtures.uuid()), { limit: 50 }))
      expect(unknown._tag).toBe("NotFound")
    })))
})

const text = (bytes: Option.Option<Uint8Array>) => Option.map(bytes, (b) => new TextDecoder().decode(b))

/** Merges `files` into the library as the admin. */
const seedLibrary = (admin: Policy.Principal, files: Record<string, string>) =>
  Effect.gen(function*() {
    const changes = yield* Changes.Changes
    const filed = yield* changes.create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Seed", description: "Seed." }),
      baseRef: Option.none(),
      edits: Fixtures.edits(files)
    })
    yield* changes.approve(admin, filed.change_id, { expected_git_ref: filed.git_ref })
  })

describe("Sandboxes, running ones", () => {
  it.effect("mounts the library the owner may read, without OWNERS files, and records what runs", () =>
    run(Effect.gen(function*() {
      const { admin, bob } = yield* setup
      yield* seedLibrary(admin, {
        "OWNERS": "owner: role:admin\n",
        "sales/q.sql": "SELECT 1\n",
        "finance/OWNERS": "reader: role:finance\n",
        "finance/plan.md": "# Plan\n"
      })
      const sandboxes = yield* Sandboxes.Sandboxes
      const runtime = yield* SandboxRuntime.SandboxRuntime
      const { sandbox_id } = yield* sandboxes.start(bob, {})
      expect(text(yield* runtime.readFile(sandbox_id, "library/sales/q.sql"))).toEqual(Option.some("SELECT 1\n"))
      expect(yield* runtime.readFile(sandbox_id, "library/OWNERS")).toEqual(Option.none())
      expect(yield* runtime.listFiles(sandbox_id, "library/finance")).toEqual(Option.none())
      const adminBox = yield* sandboxes.start(admin, {})
      expect(text(yield* runtime.readFile(adminBox.sandbox_id, "library/finance/plan.md"))).toEqual(
        Option.some("# Plan\n")
      )
      expect(yield* runtime.readFile(adminBox.sandbox_id, "library/finance/OWNERS")).toEqual(Option.none())

      yield* sandboxes.execute(bob, sandbox_id, { code: "1 + 1" })
      yield* sandboxes.exec(bob, sandbox_id, { command: "ls", kind: "bash" })
      const runs = yield* sandboxes.executions(bob, sandbox_id, { limit: 50 })
      expect(runs.executions.map((e) => [e.kind, e.source, e.input])).toEqual([
        ["bash", "platform_api", "ls"],
        ["python", "platform_api", "1 + 1"]
      ])
      expect((yield* (yield* SandboxRuntime.MemorySandboxRuntime).runs).map((r) => r.code)).toEqual(["1 + 1", "ls"])
    })))

  it.effect("only the owner works in a sandbox; an admin sees its status and may stop it", () =>
    run(Effect.gen(function*() {
      const { admin, bob } = yield* setup
      const sandboxes = yield* Sandboxes.Sandboxes
      const { sandbox_id } = yield* sandboxes.start(bob, {})
      expect((yield* Effect.flip(sandboxes.execute(admin, sandbox_id, { code: "1" })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(sandboxes.readFile(admin, sandbox_id, "library")))._tag).toBe("NotFound")
      expect((yield* sandboxes.status(admin, sandbox_id)).status).toBe("running")
      const restart = yield* Effect.flip(sandboxes.start(admin, { sandbox_id }))
      expect(restart._tag).toBe("PermissionDenied")
      expect(yield* sandboxes.stop(admin, sandbox_id)).toEqual({ success: true })
      const stopped = yield* Effect.flip(sandboxes.execute(bob, sandbox_id, { code: "1" }))
      expect(stopped).toMatchObject({ _tag: "Conflict", message: expect.stringContaining("restart it") })
      // Another organization's admin sees nothing at all.
      const other = yield* Fixtures.organizationWithAdmin("Other", "eve@other.example")
      expect((yield* Effect.flip(sandboxes.status(other.admin, sandbox_id)))._tag).toBe("NotFound")
      yield* sandboxes.start(bob, { sandbox_id })
      expect((yield* sandboxes.status(bob, sandbox_id)).status).toBe("running")
    })))

  it.effect("caps the sandboxes running at once per member and per organization (409 naming the limit)", () =>
    Effect.gen(function*() {
      const { admin, adminBox, bob, bobBox } = yield* setup
      const sandboxes = yield* Sandboxes.Sandboxes
      // The limits count every sandbox stored as running, wherever it runs: the fixture's go first.
      for (const box of [adminBox, bobBox]) yield* sandboxes.stop(admin, box.sandbox_id)
      const mine = []
      for (let i = 0; i < 2; i++) mine.push((yield* sandboxes.start(bob, {})).sandbox_id)
      const third = yield* Effect.flip(sandboxes.start(bob, {}))
      expect(third).toMatchObject({
        _tag: "Conflict",
        message: "you have 2 sandboxes running, the most a member may: stop one first"
      })
      // Restarting one that runs takes no new slot; stopping one frees a slot.
      yield* sandboxes.start(bob, { sandbox_id: mine[0]! })
      yield* sandboxes.stop(bob, mine[0]!)
      yield* sandboxes.start(bob, {})
      // The organization's cap counts every member's: bob holds 2, the admin may start 1 more.
      yield* sandboxes.start(admin, {})
      expect(yield* Effect.flip(sandboxes.start(admin, {}))).toMatchObject({
        _tag: "Conflict",
        message: "the organization has 3 sandboxes running, the most it may: stop one first"
      })
      // Another organization is not held back.
      const other = yield* Fixtures.organizationWithAdmin("Other", "eve@other.example")
      yield* sandboxes.start(other.admin, {})
    }).pipe(
      Effect.provide(
        Layer.fresh(Sandboxes.layerWith({ maxRunningPerMember: 2, maxRunningPerOrganization: 3 })).pipe(
          Layer.provideMerge(TestLayer)
        )
      )
    ))

  it.effect("files nothing when nothing is staged, and never serves or writes OWNERS files", () =>
    run(Effect.gen(function*() {
      const { bob } = yield* setup
      const sandboxes = yield* Sandboxes.Sandboxes
      const { sandbox_id } = yield* sandboxes.start(bob, {})
      const empty = yield* Effect.flip(
        sandboxes.fileChange(bob, sandbox_id, { title: "t", description: "d", draft: false })
      )
      expect(empty._tag).toBe("InvalidRequest")
      const write = yield* Effect.flip(sandboxes.writeFile(bob, sandbox_id, "library/OWNERS", new Uint8Array([1])))
      expect(write._tag).toBe("InvalidRequest")
      yield* sandboxes.writeFile(bob, sandbox_id, "library/q.sql", new TextEncoder().encode("SELECT 2\n"))
      const diff = yield* sandboxes.libraryDiff(bob, sandbox_id)
      expect(diff.diffs.map((d) => d.new_path)).toEqual(["q.sql"])
      const filed = yield* sandboxes.fileChange(bob, sandbox_id, { title: "Q", description: "A query.", draft: true })
      expect(filed).toMatchObject({ status: "draft", has_conflicts: false })
    })))
})

describe("Sandboxes at start", () => {
  it.effect("with releaseOnStart all, every sandbox stored as running is stopped (its server is gone)", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* Fixtures.organizationWithAdmin()
      const left = yield* startSandbox(org, admin.memberId)
      const released = yield* Effect.provide(
        Effect.flatMap(SandboxRepo, (repo) => repo.get(org, left.sandbox_id)),
        Sandboxes.layerWith({ releaseOnStart: "all" })
      )
      expect(Option.map(released, (s) => s.status)).toEqual(Option.some("stopped"))
    }).pipe(Effect.provide(TestLayer)))
})

describe("Sandboxes over time", () => {
  it.effect("a running sandbox sends heartbeats, and one unused past the idle timeout is stopped", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* Fixtures.organizationWithAdmin()
      const repo = yield* SandboxRepo
      const runtime = yield* SandboxRuntime.SandboxRuntime
      yield* Effect.scoped(Effect.gen(function*() {
        // Built in this scope, so that its ticker runs until the test ends.
        const sandboxes = Context.get(
          yield* Layer.build(Sandboxes.layerWith({ heartbeatMillis: 1_000, idleTimeoutMillis: 5_000 })),
          Sandboxes.Sandboxes
        )
        const { sandbox_id } = yield* sandboxes.start(admin, {})
        const stored = () => Effect.map(repo.get(org, sandbox_id), Option.getOrThrow)
        expect((yield* stored()).last_seen_at).toBeUndefined()
        yield* TestClock.adjust("1 second")
        expect((yield* stored()).last_seen_at).toBeDefined()
        expect((yield* stored()).status).toBe("running")
        // Use keeps it alive; silence past the idle timeout stops it, in the store and the runtime.
        yield* TestClock.adjust("4 seconds")
        yield* sandboxes.execute(admin, sandbox_id, { code: "1" })
        yield* TestClock.adjust("3 seconds")
        expect((yield* stored()).status).toBe("running")
        yield* TestClock.adjust("4 seconds")
        expect((yield* stored()).status).toBe("stopped")
        expect((yield* runtime.status(sandbox_id)).status).toBe("stopped")
      }))
    }).pipe(Effect.provide(TestLayer)))
})

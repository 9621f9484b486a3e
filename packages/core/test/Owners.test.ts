import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as HashMap from "effect/HashMap"
import * as Decision from "../src/Decision.js"
import { encodeText } from "../src/LibraryDiff.js"
import * as Owners from "../src/Owners.js"

const alice = "11111111-1111-4111-8111-111111111111"
const bob = "22222222-2222-4222-8222-222222222222"

const caller = (memberId: string, extra: Partial<Owners.Caller> = {}): Owners.Caller => ({
  memberId,
  roleNames: [],
  isAdmin: false,
  ...extra
})

const tree = (files: Record<string, string>): Owners.OwnersTree =>
  Either.getOrThrow(Owners.fromFiles(Object.entries(files)))

const parseError = (content: string) =>
  Either.getLeft(Owners.parse(content, "docs/OWNERS")).pipe((o) => {
    if (o._tag === "None") throw new Error(`expected a parse error for ${JSON.stringify(content)}`)
    return o.value
  })

describe("Owners.parse", () => {
  it("reads every directive, skipping comments and blank lines (CRLF too)", () => {
    const file = Either.getOrThrow(Owners.parse([
      "# analytics folder",
      "",
      `owner: member:${alice.toUpperCase()}, Carol@Example.com`,
      "owner: role:analysts",
      "reader: role:viewers",
      "inherit: false",
      "rule: approvals=2 distinct authors=role:contractors,role:interns",
      "rule: approvals=1",
      "auto_approve: paths=*.md,notes/** authors=role:admin"
    ].join("\r\n")))
    expect(file.owners).toEqual([
      { _tag: "Member", id: alice },
      { _tag: "Email", email: "carol@example.com" },
      { _tag: "Role", name: "analysts" }
    ])
    expect(file.readers).toEqual([{ _tag: "Role", name: "viewers" }])
    expect(file.inherit).toBe(false)
    expect(file.rules).toEqual([
      { approvals: 2, distinct: true, authors: ["contractors", "interns"], checks: [] },
      { approvals: 1, distinct: false, authors: [], checks: [] }
    ])
    expect(file.autoApprove).toEqual([{ paths: ["*.md", "notes/**"], authors: ["admin"] }])
  })

  it("reads a rule that requires the evaluation check, with or without approvals", () => {
    const file = Either.getOrThrow(Owners.parse(
      "rule: checks=evaluations\nrule: approvals=2 checks=evaluations authors=role:contractors\n"
    ))
    expect(file.rules).toEqual([
      { approvals: 1, distinct: false, authors: [], checks: ["evaluations"] },
      { approvals: 2, distinct: false, authors: ["contractors"], checks: ["evaluations"] }
    ])
    const bad = Owners.parse("rule: checks=lint\n")
    expect(Either.isLeft(bad) && bad.left.message).toBe(`OWNERS:1: checks takes evaluations, got "lint"`)
    const none = Owners.parse("rule: distinct\n")
    expect(Either.isLeft(none) && none.left.message).toBe(
      "OWNERS:1: a rule needs approvals=<n>, checks=evaluations or both"
    )
  })

  it("defaults to inheriting and to no rules", () => {
    const file = Either.getOrThrow(Owners.parse(`owner: member:${alice}\n`))
    expect(file.inherit).toBe(true)
    expect(file.rules).toEqual([])
    expect(file.autoApprove).toEqual([])
  })

  it.each([
    ["owners: role:x", 1, "unknown directive \"owners\""],
    ["just words", 1, "expected \"<directive>: <value>\""],
    ["# ok\nowner:", 2, "needs a value"],
    ["owner: member:not-a-uuid", 1, "is not member:<uuid>"],
    ["owner: bob", 1, "is not a principal"],
    ["owner: role:", 1, "is not role:<name>"],
    ["owner: role:a,,role:b", 1, "empty item"],
    ["inherit: false\n\ninherit: true", 3, "given twice"],
    ["inherit: no", 1, "true or false"],
    ["rule: distinct", 1, "needs approvals=<n>"],
    ["rule: approvals=0", 1, "whole number"],
    ["rule: approvals=two", 1, "whole number"],
    ["rule: approvals=1 approvals=2", 1, "given twice"],
    ["rule: approvals=1 quorum=3", 1, "unknown option \"quorum\""],
    ["rule: approvals=1 distinct=yes", 1, "takes no value"],
    ["rule: approvals=1 authors=alice@example.com", 1, "role:<name>"],
    ["rule: approvals=1 authors", 1, "needs a value"],
    ["auto_approve: authors=role:a", 1, "needs paths="],
    ["auto_approve: paths=../secret/*", 1, "not a relative glob"],
    ["auto_approve: paths=/abs", 1, "not a relative glob"]
  ])("rejects %j at line %i", (content, line, reason) => {
    const error = parseError(content)
    expect(error.line).toBe(line)
    expect(error.reason).toContain(reason)
    expect(error.message).toContain(`docs/OWNERS:${line}:`)
  })

  const principal = FastCheck.oneof(
    FastCheck.uuid().map((id): Owners.Subject => ({ _tag: "Member", id })),
    FastCheck.stringMatching(/^[a-z0-9.]{1,8}@[a-z]{1,8}\.com$/).map((email): Owners.Subject => ({
      _tag: "Email",
      email
    })),
    FastCheck.stringMatching(/^[A-Za-z0-9_.-]{1,10}$/).map((name): Owners.Subject => ({ _tag: "Role", name }))
  )
  const roles = FastCheck.array(FastCheck.stringMatching(/^[a-z]{1,6}$/), { maxLength: 3 })
  const file = FastCheck.record({
    owners: FastCheck.array(principal, { maxLength: 4 }),
    readers: FastCheck.array(principal, { maxLength: 3 }),
    inherit: FastCheck.boolean(),
    rules: FastCheck.array(
      FastCheck.record({
        approvals: FastCheck.integer({ min: 1, max: 999 }),
        distinct: FastCheck.boolean(),
        authors: roles,
        checks: FastCheck.constantFrom([], ["evaluations" as const])
      }),
      { maxLength: 3 }
    ),
    autoApprove: FastCheck.array(
      FastCheck.record({
        paths: FastCheck.array(FastCheck.constantFrom("*.md", "**", "docs/**/*.sql", "a?.txt"), {
          minLength: 1,
          maxLength: 3
        }),
        authors: roles
      }),
      { maxLength: 2 }
    )
  }).map((fields) => new Owners.OwnersFile(fields))

  it.prop("format is read back by parse", [file], ([f]) => {
    expect(Either.getOrThrow(Owners.parse(Owners.format(f)))).toEqual(f)
  })
})

describe("Owners.fromFiles", () => {
  it("keys files by folder, ignores other paths and names the malformed file", () => {
    const t = tree({
      "OWNERS": `owner: member:${alice}`,
      "a/b/OWNERS": "reader: role:x",
      "a/readme.md": "owner: nonsense"
    })
    expect([...HashMap.keys(t.folders)].sort()).toEqual(["", "a/b"])
    const error = Either.getLeft(Owners.fromFiles([["x/OWNERS", "owner: role:a"], ["y/OWNERS", "bogus"]]))
    expect(error._tag === "Some" && error.value.path).toBe("y/OWNERS")
  })

  it("fromSnapshot decodes OWNERS files from bytes", () => {
    const t = Either.getOrThrow(Owners.fromSnapshot(HashMap.make(
      ["team/OWNERS", encodeText(`owner: member:${alice}`)],
      ["team/data.bin", new Uint8Array([0, 255, 1])]
    )))
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(alice), "team/q.sql"))).toBe(true)
  })
})

describe("Owners.writeAuthority", () => {
  const t = tree({
    "OWNERS": `owner: member:${alice}`,
    "sales/OWNERS": "owner: role:sales, Bob@Example.com",
    "sales/private/OWNERS": "inherit: false\nowner: role:finance"
  })

  it("admins may write every path, even where no OWNERS names an owner", () => {
    const admin = caller(bob, { isAdmin: true })
    for (const path of ["x.md", "OWNERS", "sales/private/OWNERS", "sales/private/deep/q.sql"]) {
      expect(Owners.writeAuthority(t, admin, path)).toEqual(Decision.allow)
      expect(Owners.writeAuthority(Owners.empty, admin, path)).toEqual(Decision.allow)
    }
  })

  it("a path no OWNERS governs is writable by admins only", () => {
    const decision = Owners.writeAuthority(Owners.empty, caller(alice), "notes/a.md")
    expect(decision).toEqual(Decision.deny("permission_denied", "no OWNERS write authority on notes/a.md"))
  })

  it("owners match by member id, e-mail (case-insensitive) and role, and inherit downwards", () => {
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(alice), "sales/q.sql"))).toBe(true)
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(bob, { email: "BOB@example.com" }), "sales/x/q.sql"))).toBe(
      true
    )
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(bob, { roleNames: ["sales"] }), "sales/q.sql"))).toBe(true)
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(bob, { roleIds: ["sales"] }), "sales/q.sql"))).toBe(true)
    expect(Decision.isDeny(Owners.writeAuthority(t, caller(bob, { roleNames: ["sales"] }), "top.md"))).toBe(true)
  })

  it("inherit: false stops parent owners", () => {
    expect(Decision.isDeny(Owners.writeAuthority(t, caller(alice), "sales/private/q.sql"))).toBe(true)
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(bob, { roleNames: ["finance"] }), "sales/private/q.sql")))
      .toBe(true)
  })

  it("an OWNERS file is governed by the folder above it, and the root one by admins only", () => {
    const financeOwner = caller(bob, { roleNames: ["finance"] })
    expect(Decision.isDeny(Owners.writeAuthority(t, financeOwner, "sales/private/OWNERS"))).toBe(true)
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(bob, { roleNames: ["sales"] }), "sales/private/OWNERS")))
      .toBe(true)
    expect(Decision.isDeny(Owners.writeAuthority(t, caller(bob, { roleNames: ["sales"] }), "sales/OWNERS"))).toBe(true)
    expect(Decision.isAllow(Owners.writeAuthority(t, caller(alice), "sales/OWNERS"))).toBe(true)
    expect(Owners.writeAuthority(t, caller(alice), "OWNERS")).toEqual(
      Decision.deny("permission_denied", "only organization admins may change the root OWNERS file")
    )
  })
})

describe("Owners.readAuthority", () => {
  const t = tree({
    "hr/OWNERS": `owner: member:${alice}\nreader: role:hr`,
    "hr/public/OWNERS": "inherit: false",
    "eng/OWNERS": `owner: member:${alice}`
  })

  it("a folder without readers is open to the whole organization", () => {
    expect(Decision.isAllow(Owners.readAuthority(Owners.empty, caller(bob), "any/file.md"))).toBe(true)
    expect(Decision.isAllow(Owners.readAuthority(t, caller(bob), "eng/a.md"))).toBe(true)
  })

  it("readers restrict reading to readers, owners and admins; a denial is not_found", () => {
    expect(Owners.readAuthority(t, caller(bob), "hr/salaries.csv")).toEqual(
      Decision.deny("not_found", "no OWNERS read authority on hr/salaries.csv")
    )
    expect(Decision.isAllow(Owners.readAuthority(t, caller(bob, { roleNames: ["hr"] }), "hr/x/salaries.csv"))).toBe(
      true
    )
    expect(Decision.isAllow(Owners.readAuthority(t, caller(alice), "hr/salaries.csv"))).toBe(true)
    expect(Decision.isAllow(Owners.readAuthority(t, caller(bob, { isAdmin: true }), "hr/salaries.csv"))).toBe(true)
  })

  it("inherit: false reopens a subfolder", () => {
    expect(Decision.isAllow(Owners.readAuthority(t, caller(bob), "hr/public/handbook.md"))).toBe(true)
  })

  it("prune keeps exactly the readable paths, in order", () => {
    const paths = ["eng/a.md", "hr/salaries.csv", "hr/public/handbook.md", "hr/OWNERS", "top.md"]
    expect(Owners.prune(t, caller(bob), paths)).toEqual(["eng/a.md", "hr/public/handbook.md", "top.md"])
    expect(Owners.prune(t, caller(bob, { roleNames: ["hr"] }), paths)).toEqual(paths)
    const files = HashMap.fromIterable(paths.map((p) => [p, new Uint8Array()] as const))
    expect([...HashMap.keys(Owners.pruneFiles(t, caller(bob), files))].sort()).toEqual(
      ["eng/a.md", "hr/public/handbook.md", "top.md"]
    )
  })
})

describe("Owners.globMatches", () => {
  it.each([
    ["*.md", "a.md", true],
    ["*.md", "docs/a.md", false],
    ["**/*.md", "docs/x/a.md", true],
    ["**/*.md", "a.md", true],
    ["docs/**", "docs/x/y.sql", true],
    ["docs/**", "other/x.sql", false],
    ["a?.txt", "ab.txt", true],
    ["a?.txt", "a/.txt", false],
    ["report.v1.md", "reportxv1.md", false]
  ])("%s against %s is %s", (glob, path, expected) => {
    expect(Owners.globMatches(glob, path)).toBe(expected)
  })
})

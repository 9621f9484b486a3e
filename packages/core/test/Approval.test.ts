import { describe, expect, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Approval from "../src/Approval.js"
import * as Decision from "../src/Decision.js"
import * as Owners from "../src/Owners.js"

const members = Arr.makeBy(6, (i) => `00000000-0000-4000-8000-00000000000${i}`)
const [alice, bob, carol, dave, erin] = members as [string, string, string, string, string, string]

const person = (memberId: string, extra: Partial<Owners.Caller> = {}): Owners.Caller => ({
  memberId,
  roleNames: [],
  isAdmin: false,
  ...extra
})

const tree = (files: Record<string, string>): Owners.OwnersTree =>
  Either.getOrThrow(Owners.fromFiles(Object.entries(files)))

const facts = (
  t: Owners.OwnersTree,
  touchedPaths: ReadonlyArray<string>,
  author: Owners.Caller,
  approvers: ReadonlyArray<Owners.Caller> = [],
  revision = 1
): Approval.ChangeFacts => ({
  tree: t,
  touchedPaths,
  author,
  revision,
  approvals: approvers.map((approver) => ({ revision, approver }))
})

// sales: two distinct approvals from owners for contractors; anyone else's change applies on their
// own authority. eng: every author needs two approvals, self-approval allowed.
const policy = tree({
  "OWNERS": `owner: member:${erin}`,
  "sales/OWNERS":
    `owner: member:${alice}, member:${bob}, member:${carol}\nrule: approvals=2 distinct authors=role:contractors`,
  "eng/OWNERS": `owner: member:${alice}, member:${dave}\nrule: approvals=2\nauto_approve: paths=docs/**/*.md,*.txt`,
  "eng/locked/OWNERS": "inherit: false\nowner: role:security"
})
const admin = person("00000000-0000-4000-8000-0000000000aa", { isAdmin: true })
const contractor = person(dave, { roleNames: ["contractors"] })

describe("Approval rules (seed)", () => {
  it("1. the caller needs write authority on every touched path", () => {
    const f = facts(policy, ["sales/q.sql", "eng/q.sql"], person(carol))
    expect(Decision.isAllow(Approval.canApprove(facts(policy, ["sales/q.sql"], person(carol)), person(bob)))).toBe(true)
    expect(Approval.canApprove(f, person(bob))).toEqual(
      Decision.deny("permission_denied", "no OWNERS write authority on eng/q.sql")
    )
    expect(Decision.isAllow(Approval.canApprove(f, person(alice)))).toBe(true)
  })

  it("2. self-approval is rejected only where a rule requires distinct approvers", () => {
    const authorOwner = person(bob, { roleNames: ["contractors"] })
    expect(Approval.canApprove(facts(policy, ["sales/q.sql"], authorOwner), authorOwner)).toEqual(
      Decision.deny("permission_denied", "self-approval is not allowed: a folder rule requires distinct approvers")
    )
    const engAuthor = person(alice)
    expect(Decision.isAllow(Approval.canApprove(facts(policy, ["eng/q.sql"], engAuthor), engAuthor))).toBe(true)
    expect(Approval.countedApprovers(facts(policy, ["eng/q.sql"], engAuthor, [engAuthor]))).toEqual([alice])
  })

  it("3. admins count as owners of every path and are part of the approver population", () => {
    const f = facts(policy, ["sales/q.sql", "eng/locked/key.txt", "OWNERS"], contractor, [admin, person(bob)])
    expect(Decision.isAllow(Approval.canApprove(f, admin))).toBe(true)
    expect(Approval.countedApprovers(f)).toEqual([admin.memberId])
  })

  it("4. a rule scoped to author roles governs only those authors; others apply on their own authority", () => {
    expect(Approval.requirement(policy, contractor, ["sales/q.sql"])).toEqual({ approvals: 2, distinct: true })
    expect(Approval.requirement(policy, person(carol), ["sales/q.sql"])).toEqual(Approval.ownAuthority)
    // An owner authoring outside the scope lands the change with their own approval.
    const own = Approval.evaluate(facts(policy, ["sales/q.sql"], person(carol), [person(carol)]), person(carol))
    expect(own.mergeable).toBe(true)
    // A non-owner outside the scope still needs an owner.
    const outsider = person("00000000-0000-4000-8000-0000000000bb")
    const alone = Approval.evaluate(facts(policy, ["sales/q.sql"], outsider, [outsider]), outsider)
    expect(alone).toMatchObject({ approvalCount: 0, requiredApprovals: 1, mergeable: false })
    expect(Decision.isDeny(alone.canApprove)).toBe(true)
  })

  it("4. an empty author list governs every author", () => {
    for (const author of [person(carol), contractor, admin]) {
      expect(Approval.requirement(policy, author, ["eng/q.sql"])).toEqual({ approvals: 2, distinct: false })
    }
  })

  it("5. the change merges only once the required approvals are met", () => {
    const one = Approval.evaluate(facts(policy, ["sales/q.sql"], contractor, [person(alice)]), person(bob))
    expect(one).toMatchObject({ approvalCount: 1, requiredApprovals: 2, mergeable: false })
    const two = Approval.evaluate(facts(policy, ["sales/q.sql"], contractor, [person(alice), person(bob)]), person(bob))
    expect(two).toMatchObject({ approvalCount: 2, requiredApprovals: 2, mergeable: true, callerApproved: true })
  })
})

describe("Approval counting", () => {
  it("counts each approver once, only on the current revision, only with write authority on every path", () => {
    const f: Approval.ChangeFacts = {
      tree: policy,
      touchedPaths: ["sales/q.sql", "sales/r.sql"],
      author: contractor,
      revision: 2,
      approvals: [
        { revision: 1, approver: person(carol) },
        { revision: 2, approver: person(alice) },
        { revision: 2, approver: person(alice) },
        { revision: 2, approver: person(erin) }, // root owner: owns sales too by inheritance
        { revision: 2, approver: person(dave) } // not an owner of sales
      ]
    }
    expect(Approval.countedApprovers(f)).toEqual([alice, erin])
    const e = Approval.evaluate(f, person(carol))
    expect(e.callerApproved).toBe(false)
    expect(e.mergeable).toBe(true)
  })

  it("the requirement of a change is the strictest over its paths", () => {
    expect(Approval.requirement(policy, contractor, ["eng/q.sql", "sales/q.sql"])).toEqual({
      approvals: 2,
      distinct: true
    })
    expect(Approval.requirement(policy, person(carol), ["misc/a.md"])).toEqual(Approval.ownAuthority)
  })

  it("a change to an OWNERS file is governed by the folder above, so owners cannot widen their own access", () => {
    // alice owns eng but only erin (root) and admins own the folder above eng.
    const f = facts(policy, ["eng/OWNERS"], person(dave), [person(alice)])
    expect(Decision.isDeny(Approval.canApprove(f, person(alice)))).toBe(true)
    expect(Approval.countedApprovers(f)).toEqual([])
    expect(Decision.isAllow(Approval.canApprove(f, person(erin)))).toBe(true)
    expect(Approval.autoApproves(policy, admin, ["eng/OWNERS"])).toBe(false)
  })

  it("the root OWNERS file is governed by the root's own rules and approved by admins only", () => {
    const strict = tree({ "OWNERS": `owner: member:${erin}\nrule: approvals=2 distinct` })
    expect(Approval.requirement(strict, person(erin), ["OWNERS"])).toEqual({ approvals: 2, distinct: true })
    expect(Decision.isDeny(Approval.canApprove(facts(strict, ["OWNERS"], person(alice)), person(erin)))).toBe(true)
  })
})

describe("Approval.autoApproves", () => {
  it("needs a rule matching every touched path, globs relative to the rule's folder", () => {
    expect(Approval.autoApproves(policy, person(carol), ["eng/notes.txt", "eng/docs/a/b.md"])).toBe(true)
    expect(Approval.autoApproves(policy, person(carol), ["eng/notes.txt", "eng/q.sql"])).toBe(false)
    expect(Approval.autoApproves(policy, person(carol), ["eng/sub/notes.txt"])).toBe(false)
    expect(Approval.autoApproves(policy, person(carol), [])).toBe(false)
  })

  it("inherit: false drops parent auto-approve rules, and author scoping applies", () => {
    expect(Approval.autoApproves(policy, person(carol), ["eng/locked/notes.txt"])).toBe(false)
    const scoped = tree({ "OWNERS": "auto_approve: paths=** authors=role:bots" })
    expect(Approval.autoApproves(scoped, person(carol, { roleNames: ["bots"] }), ["a/b.md"])).toBe(true)
    expect(Approval.autoApproves(scoped, person(carol), ["a/b.md"])).toBe(false)
  })
})

describe("Approval deny and restore", () => {
  it("the author may always deny and restore; others need write authority on every path", () => {
    const f = facts(policy, ["sales/q.sql", "eng/q.sql"], person(carol))
    for (const check of [Approval.canDeny, Approval.canRestore]) {
      expect(check(f, person(carol))).toEqual(Decision.allow)
      expect(Decision.isDeny(check(f, person(bob)))).toBe(true)
      expect(check(f, person(alice))).toEqual(Decision.allow)
      expect(check(f, admin)).toEqual(Decision.allow)
    }
  })
})

describe("Approval.revalidate", () => {
  it("re-checks approvals against the tree being merged into", () => {
    const approved = facts(policy, ["eng/q.sql"], person(carol), [person(alice), person(dave)])
    expect(Approval.revalidate({ ...approved, autoApproved: false })).toEqual(Decision.allow)
    const moved = tree({ "eng/OWNERS": `owner: member:${alice}\nrule: approvals=3` })
    const decision = Approval.revalidate({ ...approved, tree: moved, autoApproved: false })
    expect(decision).toEqual(Decision.deny(
      "conflict",
      "the target's OWNERS rules need 3 approval(s) from approvers with write authority on every path; 1 count"
    ))
  })

  it("an auto-approved change must still match an auto-approve rule", () => {
    const f = { ...facts(policy, ["eng/notes.txt"], person(carol)), autoApproved: true }
    expect(Approval.revalidate(f)).toEqual(Decision.allow)
    expect(Decision.isDeny(Approval.revalidate({ ...f, tree: tree({ "eng/OWNERS": `owner: member:${alice}` }) }))).toBe(
      true
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const member = FastCheck.constantFrom(...members)
const someMembers = (minLength = 0) => FastCheck.subarray(members, { minLength })

/** One folder governed by one OWNERS file, approvals drawn from the member pool. */
const scenario = FastCheck.record({
  folder: FastCheck.constantFrom("team", "team/sub"),
  owners: someMembers(1),
  admins: someMembers(),
  required: FastCheck.integer({ min: 1, max: 4 }),
  distinct: FastCheck.boolean(),
  scoped: FastCheck.boolean(),
  author: member,
  authorIsContractor: FastCheck.boolean(),
  approvers: FastCheck.array(member, { maxLength: 8 }),
  stale: FastCheck.array(member, { maxLength: 4 }),
  files: FastCheck.subarray(["q.sql", "x/y.md", "z.py"], { minLength: 1 })
})

const folders = ["", "a", "a/b", "c"] as const
const principal = FastCheck.oneof(
  member.map((id) => `member:${id}`),
  FastCheck.constantFrom("role:r1", "role:r2")
)
const ownersFile = FastCheck.record({
  owners: FastCheck.array(principal, { maxLength: 3 }),
  readers: FastCheck.array(principal, { maxLength: 2 }),
  inherit: FastCheck.boolean(),
  rule: FastCheck.option(FastCheck.record({
    approvals: FastCheck.integer({ min: 1, max: 3 }),
    distinct: FastCheck.boolean(),
    scoped: FastCheck.boolean()
  }))
}).map((f) =>
  [
    ...f.owners.map((p) => `owner: ${p}`),
    ...f.readers.map((p) => `reader: ${p}`),
    `inherit: ${f.inherit}`,
    ...(f.rule === null
      ? []
      : [
        `rule: approvals=${f.rule.approvals}${f.rule.distinct ? " distinct" : ""}${
          f.rule.scoped ? " authors=role:r1" : ""
        }`
      ])
  ].join("\n")
)
const anyTree = FastCheck.record({
  "": FastCheck.option(ownersFile),
  a: FastCheck.option(ownersFile),
  "a/b": FastCheck.option(ownersFile),
  c: FastCheck.option(ownersFile)
})
  .map((byFolder) =>
    tree(Object.fromEntries(folders.flatMap((f) => {
      const content = byFolder[f]
      return content === null ? [] : [[f === "" ? "OWNERS" : `${f}/OWNERS`, content]]
    })))
  )
const paths = FastCheck.subarray(
  ["top.md", "OWNERS", "a/x.md", "a/OWNERS", "a/b/y.sql", "a/b/OWNERS", "c/z.py", "c/OWNERS", "d/e.md"],
  { minLength: 1 }
)
const anyPerson = FastCheck.record({
  memberId: member,
  roleNames: FastCheck.subarray(["r1", "r2"]),
  isAdmin: FastCheck.boolean()
})

describe("Approval properties", () => {
  it.prop("a change is mergeable exactly when enough distinct eligible approvals are counted", [scenario], ([s]) => {
    const principalOf = (id: string): Owners.Caller =>
      person(id, {
        isAdmin: s.admins.includes(id),
        roleNames: id === s.author && s.authorIsContractor ? ["contractors"] : []
      })
    const t = tree({
      [`${s.folder}/OWNERS`]: [
        `owner: ${s.owners.map((id) => `member:${id}`).join(", ")}`,
        `rule: approvals=${s.required}${s.distinct ? " distinct" : ""}${s.scoped ? " authors=role:contractors" : ""}`
      ].join("\n")
    })
    const f: Approval.ChangeFacts = {
      tree: t,
      touchedPaths: s.files.map((file) => `${s.folder}/${file}`),
      author: principalOf(s.author),
      revision: 2,
      approvals: [
        ...s.stale.map((id) => ({ revision: 1, approver: principalOf(id) })),
        ...s.approvers.map((id) => ({ revision: 2, approver: principalOf(id) }))
      ]
    }
    // The oracle, straight from the seed: a scoped rule governs only contractors; other authors
    // apply on their own authority (one approval, self counts); owners and admins are eligible.
    const governed = !s.scoped || s.authorIsContractor
    const required = governed ? s.required : 1
    const distinct = governed && s.distinct
    const eligible = Arr.dedupe(s.approvers).filter((id) =>
      (s.owners.includes(id) || s.admins.includes(id)) && !(distinct && id === s.author)
    )
    const evaluation = Approval.evaluate(f, principalOf(s.author))
    expect(evaluation.requiredApprovals).toBe(required)
    expect(evaluation.approvalCount).toBe(eligible.length)
    expect(evaluation.mergeable).toBe(eligible.length >= required)
  })

  it.prop(
    "an admin may approve any path of anyone else's change",
    [anyTree, paths, anyPerson],
    ([t, touched, author]) => {
      const approver = person("00000000-0000-4000-8000-0000000000ad", { isAdmin: true })
      expect(Approval.canApprove(facts(t, touched, author), approver)).toEqual(Decision.allow)
    }
  )

  it.prop(
    "nobody may approve a change touching a path they have no write authority on",
    [anyTree, paths, anyPerson, anyPerson],
    ([t, touched, author, caller]) => {
      const f = facts(t, touched, author)
      const allowed = Decision.isAllow(Approval.canApprove(f, caller))
      if (allowed) {
        for (const path of touched) expect(Owners.writeAuthority(t, caller, path)).toEqual(Decision.allow)
      }
      // A folder locked to a role nobody holds: only admins may approve a change that touches it.
      const locked = Either.getOrThrow(Owners.fromFiles([
        ...[...t.folders].map(([folder, file]) =>
          [folder === "" ? "OWNERS" : `${folder}/OWNERS`, Owners.format(file)] as const
        ),
        ["locked/OWNERS", "inherit: false\nowner: role:nobody"]
      ]))
      const withLocked = Approval.canApprove(facts(locked, [...touched, "locked/f.md"], author), caller)
      expect(Decision.isAllow(withLocked)).toBe(
        caller.isAdmin && !(caller.memberId === author.memberId &&
          Approval.requirement(locked, author, [...touched, "locked/f.md"]).distinct)
      )
    }
  )

  it.prop("the author may always deny their own change", [anyTree, paths, anyPerson], ([t, touched, author]) => {
    expect(Approval.canDeny(facts(t, touched, author), author)).toEqual(Decision.allow)
  })
})

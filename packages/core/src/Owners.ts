/**
 * OWNERS files: who may read and write each folder of the Context Library, and which approval
 * and auto-approve rules govern changes to it. The format is documented for users in
 * `docs/owners.md`.
 *
 * Part of the policy engine: pure functions over plain data, answering with `Decision`s.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as Decision from "./Decision.js"
import { baseName, decodeText, type Files } from "./LibraryDiff.js"

/**
 * The file name of an OWNERS file.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileName = "OWNERS"

/**
 * Who is asking (or who authored a change), as plain data resolved by the caller of the policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Caller {
  readonly memberId: string
  readonly email?: string | undefined
  /** Role ids the member holds in effect for this request. */
  readonly roleIds?: ReadonlyArray<string> | undefined
  /** Role names the member holds in effect for this request. */
  readonly roleNames: ReadonlyArray<string>
  /** Holds the `admin` system role: an owner of every path. */
  readonly isAdmin: boolean
}

/**
 * Whom an `owner:` or `reader:` line names: a member, an e-mail address or a role (not `Policy.Principal`, the caller).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Subject = Schema.Union(
  Schema.TaggedStruct("Member", { id: Schema.UUID }),
  Schema.TaggedStruct("Email", { email: Schema.String }),
  Schema.TaggedStruct("Role", { name: Schema.String })
)
export type Subject = typeof Subject.Type

/**
 * A check a rule can require to pass before a change merges (`checks=evaluations`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequiredCheck = Schema.Literal("evaluations")
export type RequiredCheck = typeof RequiredCheck.Type

/**
 * A `rule:` line: how many approvals a change needs, from whom, and which checks must pass.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rule = Schema.Struct({
  approvals: Schema.Int.pipe(Schema.positive()),
  /** The author's own approval does not count. */
  distinct: Schema.Boolean,
  /** Role names of the authors the rule governs; empty governs every author. */
  authors: Schema.Array(Schema.String),
  /** Checks that must have passed on the change's current revision before it merges. */
  checks: Schema.Array(RequiredCheck)
})
export type Rule = typeof Rule.Type

/**
 * An `auto_approve:` line: changes to matching paths by matching authors merge on creation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AutoApprove = Schema.Struct({
  /** Globs relative to the folder of the OWNERS file. */
  paths: Schema.Array(Schema.String),
  /** Role names of the authors the rule applies to; empty applies to every author. */
  authors: Schema.Array(Schema.String)
})
export type AutoApprove = typeof AutoApprove.Type

/**
 * One parsed OWNERS file.
 *
 * @since 0.1.0
 * @category models
 */
export class OwnersFile extends Schema.Class<OwnersFile>("@sightline/core/Owners/OwnersFile")({
  owners: Schema.Array(Subject),
  readers: Schema.Array(Subject),
  /** `inherit: false` drops everything declared by parent folders. */
  inherit: Schema.Boolean,
  rules: Schema.Array(Rule),
  autoApprove: Schema.Array(AutoApprove)
}) {}

/**
 * A malformed OWNERS file: where and why.
 *
 * @since 0.1.0
 * @category errors
 */
export class OwnersParseError extends Data.TaggedError("OwnersParseError")<{
  readonly path: string
  readonly line: number
  readonly reason: string
}> {
  override get message(): string {
    return `${this.path}:${this.line}: ${this.reason}`
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing and formatting
// ---------------------------------------------------------------------------------------------

const isUuid = Schema.is(Schema.UUID)
const roleName = /^[A-Za-z0-9_.-]+$/
const email = /^[^\s@,]+@[^\s@,]+$/

const parseSubject = (text: string): Either.Either<Subject, string> => {
  if (text.startsWith("member:")) {
    const id = text.slice("member:".length).toLowerCase()
    return isUuid(id) ? Either.right({ _tag: "Member", id }) : Either.left(`"${text}" is not member:<uuid>`)
  }
  if (text.startsWith("role:")) {
    const name = text.slice("role:".length)
    return roleName.test(name) ? Either.right({ _tag: "Role", name }) : Either.left(`"${text}" is not role:<name>`)
  }
  return email.test(text)
    ? Either.right({ _tag: "Email", email: text.toLowerCase() })
    : Either.left(`"${text}" is not a principal (expected member:<uuid>, role:<name> or an e-mail address)`)
}

/** A comma-separated list with no empty item. */
const list = (value: string, what: string): Either.Either<Array<string>, string> => {
  const items = value.split(",").map((s) => s.trim())
  return items.some((s) => s === "") ? Either.left(`empty item in the ${what} list`) : Either.right(items)
}

const principals = (value: string) =>
  Either.flatMap(list(value, "principal"), (items) => Either.all(items.map(parseSubject)))

const authorRoles = (value: string) =>
  Either.flatMap(
    list(value, "authors"),
    (items) =>
      Either.all(items.map((item) =>
        item.startsWith("role:") && roleName.test(item.slice(5))
          ? Either.right(item.slice(5))
          : Either.left(`authors takes role:<name> entries, got "${item}"`)
      ))
  )

const globProblem = (glob: string): string | undefined =>
  glob.startsWith("/") || glob.split("/").some((s) => s === "" || s === "." || s === "..")
    ? `"${glob}" is not a relative glob`
    : undefined

/** Splits `k=v` options, rejecting unknown and repeated keys. */
const options = (
  value: string,
  known: ReadonlyArray<string>
): Either.Either<Map<string, string | true>, string> => {
  const result = new Map<string, string | true>()
  for (const token of value.split(/\s+/).filter((t) => t !== "")) {
    const eq = token.indexOf("=")
    const key = eq < 0 ? token : token.slice(0, eq)
    if (!known.includes(key)) return Either.left(`unknown option "${key}" (expected ${known.join(", ")})`)
    if (result.has(key)) return Either.left(`option "${key}" is given twice`)
    result.set(key, eq < 0 ? true : token.slice(eq + 1))
  }
  return Either.right(result)
}

const stringOption = (opts: Map<string, string | true>, key: string): Either.Either<string | undefined, string> => {
  const value = opts.get(key)
  return value === true || value === ""
    ? Either.left(`option "${key}" needs a value (${key}=...)`)
    : Either.right(value)
}

const parseRule = (value: string): Either.Either<Rule, string> =>
  Either.gen(function*() {
    const opts = yield* options(value, ["approvals", "distinct", "authors", "checks"])
    const approvals = yield* stringOption(opts, "approvals")
    const checks = yield* stringOption(opts, "checks")
    // A rule that only requires checks keeps the author's own authority (one approval).
    if (approvals === undefined && checks === undefined) {
      return yield* Either.left("a rule needs approvals=<n>, checks=evaluations or both")
    }
    if (approvals !== undefined && !/^[1-9][0-9]{0,2}$/.test(approvals)) {
      return yield* Either.left(`approvals must be a whole number from 1 to 999, got "${approvals}"`)
    }
    const distinct = opts.get("distinct")
    if (distinct !== undefined && distinct !== true) return yield* Either.left(`"distinct" takes no value`)
    const authors = yield* stringOption(opts, "authors")
    return {
      approvals: approvals === undefined ? 1 : Number(approvals),
      distinct: distinct === true,
      authors: authors === undefined ? [] : yield* authorRoles(authors),
      checks: checks === undefined ? [] : yield* requiredChecks(checks)
    }
  })

const requiredChecks = (value: string) =>
  Either.flatMap(
    list(value, "checks"),
    (items) =>
      Either.all(items.map((item) =>
        Schema.is(RequiredCheck)(item) ? Either.right(item) : Either.left(`checks takes evaluations, got "${item}"`)
      ))
  )

const parseAutoApprove = (value: string): Either.Either<AutoApprove, string> =>
  Either.gen(function*() {
    const opts = yield* options(value, ["paths", "authors"])
    const paths = yield* stringOption(opts, "paths")
    if (paths === undefined) return yield* Either.left("auto_approve needs paths=<glob>[,<glob>...]")
    const globs = yield* list(paths, "paths")
    const problem = globs.map(globProblem).find((p) => p !== undefined)
    if (problem !== undefined) return yield* Either.left(problem)
    const authors = yield* stringOption(opts, "authors")
    return { paths: globs, authors: authors === undefined ? [] : yield* authorRoles(authors) }
  })

/**
 * Parses an OWNERS file. Strict: every non-blank line that is not a `#` comment must be one of
 * `owner:`, `reader:`, `inherit:`, `rule:` or `auto_approve:`; anything else is an error naming
 * the line. `path` only labels errors.
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (content: string, path: string = fileName): Either.Either<OwnersFile, OwnersParseError> => {
  const owners: Array<Subject> = []
  const readers: Array<Subject> = []
  const rules: Array<Rule> = []
  const autoApprove: Array<AutoApprove> = []
  let inherit: boolean | undefined
  const lines = content.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === "" || line.startsWith("#")) continue
    const fail = (reason: string) => Either.left(new OwnersParseError({ path, line: i + 1, reason }))
    const match = /^([a-z_]+)\s*:\s*(.*)$/.exec(line)
    if (match === null) return fail(`expected "<directive>: <value>", got "${line}"`)
    const [, key, value] = match as unknown as [string, string, string]
    if (value === "") return fail(`"${key}:" needs a value`)
    let outcome: Either.Either<unknown, string>
    switch (key) {
      case "owner":
        outcome = Either.map(principals(value), (ps) => owners.push(...ps))
        break
      case "reader":
        outcome = Either.map(principals(value), (ps) => readers.push(...ps))
        break
      case "inherit":
        if (inherit !== undefined) return fail(`"inherit:" is given twice`)
        if (value !== "true" && value !== "false") return fail(`inherit must be true or false, got "${value}"`)
        inherit = value === "true"
        outcome = Either.right(undefined)
        break
      case "rule":
        outcome = Either.map(parseRule(value), (rule) => rules.push(rule))
        break
      case "auto_approve":
        outcome = Either.map(parseAutoApprove(value), (rule) => autoApprove.push(rule))
        break
      default:
        return fail(`unknown directive "${key}" (expected owner, reader, inherit, rule or auto_approve)`)
    }
    if (Either.isLeft(outcome)) return fail(outcome.left)
  }
  return Either.right(new OwnersFile({ owners, readers, inherit: inherit ?? true, rules, autoApprove }))
}

const formatSubject = (p: Subject): string =>
  p._tag === "Member" ? `member:${p.id}` : p._tag === "Role" ? `role:${p.name}` : p.email

const formatAuthors = (authors: ReadonlyArray<string>) =>
  authors.length === 0 ? "" : ` authors=${authors.map((a) => `role:${a}`).join(",")}`

/**
 * Renders an OWNERS file in the canonical form `parse` reads back.
 *
 * @since 0.1.0
 * @category utils
 */
export const format = (file: OwnersFile): string =>
  [
    ...(file.inherit ? [] : ["inherit: false"]),
    ...file.owners.map((p) => `owner: ${formatSubject(p)}`),
    ...file.readers.map((p) => `reader: ${formatSubject(p)}`),
    ...file.rules.map((r) =>
      `rule: approvals=${r.approvals}${r.distinct ? " distinct" : ""}${formatAuthors(r.authors)}${
        r.checks.length === 0 ? "" : ` checks=${r.checks.join(",")}`
      }`
    ),
    ...file.autoApprove.map((a) => `auto_approve: paths=${a.paths.join(",")}${formatAuthors(a.authors)}`)
  ].map((line) => line + "\n").join("")

// ---------------------------------------------------------------------------------------------
// The tree
// ---------------------------------------------------------------------------------------------

/**
 * Every OWNERS file of a library snapshot, keyed by the folder it sits in (`""` for the root).
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnersTree {
  readonly folders: HashMap.HashMap<string, OwnersFile>
}

/**
 * A library without OWNERS files.
 *
 * @since 0.1.0
 * @category constants
 */
export const empty: OwnersTree = { folders: HashMap.empty() }

/**
 * Is this the path of an OWNERS file?
 *
 * @since 0.1.0
 * @category guards
 */
export const isOwnersFile = (path: string): boolean => baseName(path) === fileName

/**
 * The folder a path sits in (`""` for the root).
 *
 * @since 0.1.0
 * @category utils
 */
export const folderOf = (path: string): string => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}

/** The folder and every folder above it, root first. */
const chain = (folder: string): Array<string> =>
  folder === "" ? [""] : ["", ...folder.split("/").map((_, i, segments) => segments.slice(0, i + 1).join("/"))]

/**
 * Builds the tree from `path -> content` of the OWNERS files of a snapshot (other paths are
 * ignored). The first malformed file fails the whole tree: a policy is never half-read.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromFiles = (
  files: Iterable<readonly [string, string]>
): Either.Either<OwnersTree, OwnersParseError> =>
  Either.map(
    Either.all(
      Arr.sort(
        Arr.filter(Arr.fromIterable(files), ([path]) => isOwnersFile(path)),
        Order.mapInput(Order.string, (entry: readonly [string, string]) => entry[0])
      ).map(([path, content]) => Either.map(parse(content, path), (file) => [folderOf(path), file] as const))
    ),
    (entries) => ({ folders: HashMap.fromIterable(entries) })
  )

/**
 * Builds the tree from a library snapshot's files (OWNERS files are read as UTF-8).
 *
 * @since 0.1.0
 * @category utils
 */
export const fromSnapshot = (files: Files): Either.Either<OwnersTree, OwnersParseError> =>
  fromFiles(
    Arr.filterMap(Arr.fromIterable(files), ([path, bytes]) =>
      isOwnersFile(path) ? Option.some([path, decodeText(bytes)] as const) : Option.none())
  )

/**
 * A rule together with the folder whose OWNERS file declares it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Declared<A> {
  readonly folder: string
  readonly rule: A
}

/**
 * What applies to one folder once inheritance is resolved.
 *
 * @since 0.1.0
 * @category models
 */
export interface Effective {
  readonly owners: ReadonlyArray<Subject>
  readonly readers: ReadonlyArray<Subject>
  readonly rules: ReadonlyArray<Declared<Rule>>
  readonly autoApprove: ReadonlyArray<Declared<AutoApprove>>
}

const nothing: Effective = { owners: [], readers: [], rules: [], autoApprove: [] }

/**
 * Resolves a folder's policy: walking from the root down, each OWNERS file adds its owners,
 * readers and rules to its parents', or replaces them when it says `inherit: false`.
 *
 * @since 0.1.0
 * @category utils
 */
export const effective = (tree: OwnersTree, folder: string): Effective =>
  chain(folder).reduce((acc, f) =>
    Option.match(HashMap.get(tree.folders, f), {
      onNone: () => acc,
      onSome: (file) => {
        const base = file.inherit ? acc : nothing
        return {
          owners: [...base.owners, ...file.owners],
          readers: [...base.readers, ...file.readers],
          rules: [...base.rules, ...file.rules.map((rule) => ({ folder: f, rule }))],
          autoApprove: [...base.autoApprove, ...file.autoApprove.map((rule) => ({ folder: f, rule }))]
        }
      }
    }), nothing)

/**
 * Does the caller hold one of these role names (or ids)?
 *
 * @since 0.1.0
 * @category utils
 */
export const hasAnyRole = (caller: Caller, roles: ReadonlyArray<string>): boolean =>
  roles.some((role) => caller.roleNames.includes(role) || (caller.roleIds ?? []).includes(role))

/**
 * Is the caller named by this subject?
 *
 * @since 0.1.0
 * @category utils
 */
export const matches = (caller: Caller, subject: Subject): boolean => {
  switch (subject._tag) {
    case "Member":
      return subject.id === caller.memberId.toLowerCase()
    case "Email":
      return caller.email !== undefined && subject.email === caller.email.toLowerCase()
    case "Role":
      return hasAnyRole(caller, [subject.name])
  }
}

/**
 * The folder whose policy governs writing a path. An OWNERS file is governed by the folder ABOVE
 * its own, so that nobody widens their own access; the root OWNERS file has no such folder
 * (`Option.none()`: only admins may change it).
 *
 * @since 0.1.0
 * @category utils
 */
export const governingFolder = (path: string): Option.Option<string> => {
  const folder = folderOf(path)
  if (!isOwnersFile(path)) return Option.some(folder)
  return folder === "" ? Option.none() : Option.some(folderOf(folder))
}

/**
 * May the caller write (and approve changes to) this path? Admins may write everywhere; others
 * must be an owner of the governing folder. A path no OWNERS file names an owner for is writable
 * by admins only.
 *
 * @since 0.1.0
 * @category utils
 */
export const writeAuthority = (
  tree: OwnersTree,
  caller: Caller,
  path: string
): Decision.Decision<"permission_denied"> => {
  if (caller.isAdmin) return Decision.allow
  return Option.match(governingFolder(path), {
    onNone: () => Decision.deny("permission_denied", `only organization admins may change the root ${fileName} file`),
    onSome: (folder) =>
      effective(tree, folder).owners.some((p) => matches(caller, p))
        ? Decision.allow
        : Decision.deny("permission_denied", `no OWNERS write authority on ${path}`)
  })
}

/**
 * May the caller read this path? A folder is open to the whole organization until some OWNERS
 * file in effect for it lists a `reader:`; from then on only its readers, its owners and admins
 * may read it. A denial is `not_found`: a hidden path is never confirmed to exist.
 *
 * @since 0.1.0
 * @category utils
 */
export const readAuthority = (tree: OwnersTree, caller: Caller, path: string): Decision.Decision<"not_found"> => {
  if (caller.isAdmin) return Decision.allow
  const policy = effective(tree, folderOf(path))
  if (policy.readers.length === 0) return Decision.allow
  return [...policy.readers, ...policy.owners].some((p) => matches(caller, p))
    ? Decision.allow
    : Decision.deny("not_found", `no OWNERS read authority on ${path}`)
}

/**
 * The paths the caller may read, in their original order (prunes a sandbox's library mount).
 *
 * @since 0.1.0
 * @category utils
 */
export const prune = (tree: OwnersTree, caller: Caller, paths: Iterable<string>): Array<string> =>
  Arr.filter(Arr.fromIterable(paths), (path) => Decision.isAllow(readAuthority(tree, caller, path)))

/**
 * The files of a snapshot the caller may read.
 *
 * @since 0.1.0
 * @category utils
 */
export const pruneFiles = (tree: OwnersTree, caller: Caller, files: Files): Files =>
  HashMap.filter(files, (_, path) => Decision.isAllow(readAuthority(tree, caller, path)))

/**
 * Matches a path (relative to the rule's folder) against a glob: `*` and `?` stay within one
 * segment, `**` spans any number of segments.
 *
 * @since 0.1.0
 * @category utils
 */
export const globMatches = (glob: string, path: string): boolean => {
  const segments = glob.split("/")
  const source = segments
    .map((segment, i) =>
      segment === "**"
        ? i === segments.length - 1 ? ".*" : "(?:[^/]+/)*"
        : segment.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]") +
          (i === segments.length - 1 ? "" : "/")
    )
    .join("")
  return new RegExp(`^${source}$`).test(path)
}

/**
 * The path relative to a folder at or above it.
 *
 * @since 0.1.0
 * @category utils
 */
export const relativeTo = (
  folder: string,
  path: string
): string => (folder === "" ? path : path.slice(folder.length + 1))

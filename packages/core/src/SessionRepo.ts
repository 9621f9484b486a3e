/**
 * The sign-in store port: password hashes, one-time sign-in links, browser sessions and the
 * deployment's session signing key.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { MemberId, OrganizationId } from "./Ids.js"
import type * as OAuth from "./OAuth.js"
import type { SecretHash } from "./Secret.js"
import { isOfKind, type Rotation, type RotationKind, type SessionRecord, type SignInLinkRecord } from "./Session.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores what people sign in with.
 *
 * @since 0.1.0
 * @category services
 */
export class SessionRepo extends Context.Tag("@sightline/core/SessionRepo")<SessionRepo, SessionRepo.Service>() {}

export declare namespace SessionRepo {
  /** Sign-in storage. Every write that decides something is one atomic step. */
  export interface Service {
    /** Sets (or replaces) a member's password hash. */
    readonly setPassword: (
      organizationId: OrganizationId,
      memberId: MemberId,
      hash: string,
      at: DateTime.Utc
    ) => Effect.Effect<void>
    /** A member's password hash, if one was ever set. */
    readonly passwordHash: (organizationId: OrganizationId, memberId: MemberId) => Effect.Effect<Option.Option<string>>
    /** Stores a new link; the member's earlier unused links stop working (only the newest one counts). */
    readonly createLink: (link: SignInLinkRecord) => Effect.Effect<void>
    /** Uses a link: the record if it was unused and unexpired at `at`, and it is now used; else none. */
    readonly redeemLink: (tokenHash: SecretHash, at: DateTime.Utc) => Effect.Effect<Option.Option<SignInLinkRecord>>
    readonly createSession: (session: SessionRecord) => Effect.Effect<void>
    /**
     * Renews the live, unexpired session whose current refresh hash is `presented`: its hash becomes
     * `next` and the presented one its previous (`Rotated`). Two renewals with one token cannot both
     * win. A presented hash that some session had before, however many renewals ago, is
     * `Superseded` (nothing changes); `latest` when it is the one replaced last.
     * Only a session of `kind` renews (a browser's by default); renewing a grant's code clears its
     * challenge, so the code is spent.
     */
    readonly rotate: (
      presented: SecretHash,
      next: SecretHash,
      at: DateTime.Utc,
      expiresAt: DateTime.Utc,
      kind?: RotationKind
    ) => Effect.Effect<Rotation>
    /** The session whose current refresh hash is this one, live or not. */
    readonly findByRefresh: (hash: SecretHash) => Effect.Effect<Option.Option<SessionRecord>>
    /**
     * Is the session of this member live at `at` (neither ended nor expired)? Asked on every request
     * made with an access token, so that signing out or a new password stops its tokens at once.
     */
    readonly isLive: (
      organizationId: OrganizationId,
      memberId: MemberId,
      id: string,
      at: DateTime.Utc
    ) => Effect.Effect<boolean>
    /** Ends a session (already ended ones keep their first `revoked_at`). */
    readonly revokeSession: (id: string, at: DateTime.Utc) => Effect.Effect<void>
    /** Ends every live session of a member (a password set or reset signs out everywhere). */
    readonly revokeMemberSessions: (
      organizationId: OrganizationId,
      memberId: MemberId,
      at: DateTime.Utc
    ) => Effect.Effect<void>
    /**
     * The deployment's session signing key: `candidate` is stored if there is none yet, and the stored
     * one is returned, so every process of a deployment signs with the same key.
     */
    readonly signingKey: (candidate: string) => Effect.Effect<string>
    /** Registers an OAuth client, or replaces the registration of its id (a metadata document read again). */
    readonly createClient: (client: OAuth.Client) => Effect.Effect<void>
    /** The OAuth client of this id. */
    readonly getClient: (clientId: string) => Effect.Effect<Option.Option<OAuth.Client>>
    /** The live grants (exchanged, unexpired, unrevoked) of an organization's members, newest first. */
    readonly listGrants: (
      organizationId: OrganizationId,
      at: DateTime.Utc
    ) => Effect.Effect<ReadonlyArray<SessionRecord>>
    /** Ends every grant of a client in an organization; answers how many were live. */
    readonly revokeClientGrants: (
      organizationId: OrganizationId,
      clientId: string,
      at: DateTime.Utc
    ) => Effect.Effect<number>
  }
}

interface Tables {
  readonly passwords: HashMap.HashMap<MemberId, { readonly organizationId: OrganizationId; readonly hash: string }>
  readonly links: HashMap.HashMap<SecretHash, SignInLinkRecord>
  readonly sessions: HashMap.HashMap<string, SessionRecord>
  /** Every refresh hash a renewal replaced, and its session. */
  readonly spent: HashMap.HashMap<SecretHash, string>
  readonly key: Option.Option<string>
  readonly clients: HashMap.HashMap<string, OAuth.Client>
}

const live = (session: SessionRecord, at: DateTime.Utc) =>
  session.revoked_at === undefined && DateTime.lessThan(at, session.expires_at)

/**
 * The store in memory (unit tests; joins transactions of `Transaction.layerMemory`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionRepo, never, MemoryState> = Layer.effect(
  SessionRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table<Tables>({
      passwords: HashMap.empty(),
      links: HashMap.empty(),
      sessions: HashMap.empty(),
      spent: HashMap.empty(),
      key: Option.none(),
      clients: HashMap.empty()
    })
    const sessionWhere = (tables: Tables, predicate: (session: SessionRecord) => boolean) =>
      Arr.findFirst(HashMap.values(tables.sessions), predicate)
    const putSession = (session: SessionRecord) =>
      Ref.update(table, (t) => ({ ...t, sessions: HashMap.set(t.sessions, session.id, session) }))
    return SessionRepo.of({
      setPassword: (organizationId, memberId, hash) =>
        state.run(Ref.update(table, (t) => ({
          ...t,
          passwords: HashMap.set(t.passwords, memberId, { organizationId, hash })
        }))),
      passwordHash: (organizationId, memberId) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          HashMap.get(t.passwords, memberId).pipe(
            Option.filter((row) => row.organizationId === organizationId),
            Option.map((row) => row.hash)
          ))),
      createLink: (link) =>
        state.run(Ref.update(table, (t) => ({
          ...t,
          links: HashMap.set(
            HashMap.map(t.links, (other) =>
              other.member_id === link.member_id && other.used_at === undefined
                ? { ...other, used_at: link.created_at }
                : other),
            link.token_hash,
            link
          )
        }))),
      redeemLink: (tokenHash, at) =>
        state.run(Effect.gen(function*() {
          const found = HashMap.get((yield* Ref.get(table)).links, tokenHash).pipe(
            Option.filter((link) => link.used_at === undefined && DateTime.lessThan(at, link.expires_at))
          )
          if (Option.isSome(found)) {
            yield* Ref.update(table, (t) => ({
              ...t,
              links: HashMap.set(t.links, tokenHash, { ...found.value, used_at: at })
            }))
          }
          return found
        })),
      createSession: (session) => state.run(putSession(session)),
      rotate: (presented, next, at, expiresAt, kind = "session") =>
        state.run(Effect.gen(function*() {
          const tables = yield* Ref.get(table)
          const current = sessionWhere(
            tables,
            (s) => s.refresh_hash === presented && live(s, at) && isOfKind(s, kind)
          )
          if (Option.isSome(current)) {
            const { code_challenge: _, ...rest } = current.value
            const session: SessionRecord = {
              ...rest,
              refresh_hash: next,
              previous_hash: presented,
              rotated_at: at,
              expires_at: expiresAt
            }
            yield* putSession(session)
            yield* Ref.update(table, (t) => ({ ...t, spent: HashMap.set(t.spent, presented, session.id) }))
            return { _tag: "Rotated", session } as const
          }
          const spentBy = HashMap.get(tables.spent, presented)
          return Option.match(
            sessionWhere(
              tables,
              // A spent code is a grant now: the code's replay finds it among grants.
              (s) =>
                (s.previous_hash === presented || Option.contains(spentBy, s.id)) &&
                isOfKind(s, kind === "code" ? "grant" : kind)
            ),
            {
              onNone: () => ({ _tag: "Unknown" }) as const,
              onSome: (session) =>
                ({ _tag: "Superseded", session, latest: session.previous_hash === presented }) as const
            }
          )
        })),
      findByRefresh: (hash) =>
        state.run(Effect.map(Ref.get(table), (t) => sessionWhere(t, (s) => s.refresh_hash === hash))),
      isLive: (organizationId, memberId, id, at) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          Option.match(HashMap.get(t.sessions, id), {
            onNone: () => false,
            onSome: (s) =>
              s.organization_id === organizationId && s.member_id === memberId && s.revoked_at === undefined &&
              DateTime.lessThan(at, s.expires_at)
          }))),
      revokeSession: (id, at) =>
        state.run(Ref.update(table, (t) => ({
          ...t,
          sessions: HashMap.modify(t.sessions, id, (s) => s.revoked_at === undefined ? { ...s, revoked_at: at } : s)
        }))),
      revokeMemberSessions: (organizationId, memberId, at) =>
        state.run(Ref.update(table, (t) => ({
          ...t,
          sessions: HashMap.map(t.sessions, (s) =>
            s.organization_id === organizationId && s.member_id === memberId && s.revoked_at === undefined
              ? { ...s, revoked_at: at }
              : s)
        }))),
      createClient: (client) =>
        state.run(Ref.update(table, (t) => ({ ...t, clients: HashMap.set(t.clients, client.client_id, client) }))),
      getClient: (clientId) => state.run(Effect.map(Ref.get(table), (t) => HashMap.get(t.clients, clientId))),
      listGrants: (organizationId, at) =>
        state.run(Effect.map(Ref.get(table), (t) =>
          Array.from(HashMap.values(t.sessions))
            .filter((s) => s.organization_id === organizationId && live(s, at) && isOfKind(s, "grant"))
            .sort((a, b) => b.created_at.epochMillis - a.created_at.epochMillis || (a.id < b.id ? 1 : -1)))),
      revokeClientGrants: (organizationId, clientId, at) =>
        state.run(Effect.gen(function*() {
          const ended = Array.from(HashMap.values((yield* Ref.get(table)).sessions)).filter((s) =>
            s.organization_id === organizationId && s.client_id === clientId && s.revoked_at === undefined
          )
          for (const session of ended) yield* putSession({ ...session, revoked_at: at })
          return ended.filter((s) => live(s, at)).length
        })),
      signingKey: (candidate) =>
        state.run(Effect.gen(function*() {
          const stored = (yield* Ref.get(table)).key
          if (Option.isSome(stored)) return stored.value
          yield* Ref.update(table, (t) => ({ ...t, key: Option.some(candidate) }))
          return candidate
        }))
    })
  })
)

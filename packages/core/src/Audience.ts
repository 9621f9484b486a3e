/**
 * Audiences: the end users behind one member, kept apart.
 *
 * A host mints keys of one member for many end users, each with its own client attributes (the
 * key's `clientId`, which row-level security reads). What such a key makes (chats, playbooks,
 * sandboxes, feedback) belongs to the member *and* the attributes it was made under: its audience.
 * The policy engine lets only a caller of the same audience reach it, so the key bound to region A
 * never reads what the key bound to region B made, and neither reaches what the member made without
 * attributes. Agents and their runs act as their owner without attributes: they are of the audience
 * without attributes, and such keys neither make nor see them.
 *
 * An audience is a fingerprint, never the attributes: the SHA-256 of the organization and the
 * attributes' canonical JSON (keys sorted, no spaces), so equal attributes written in another key
 * order are one audience. The caller without attributes (a session, a key without client metadata)
 * is the audience `none` (`""`). It is computed synchronously (the policy engine is pure), with
 * `@noble/hashes`' audited SHA-256.
 *
 * @since 0.1.0
 */
import { sha256 } from "@noble/hashes/sha2"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils"
import type { OrganizationId } from "./Ids.js"

/**
 * The audience of callers without client attributes (sessions, keys without client metadata).
 *
 * @since 0.1.0
 * @category constants
 */
export const none = ""

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
    )
  }
  return value
}

/**
 * The attributes' JSON with its keys sorted at every depth and no spaces; a text that does not parse
 * (never minted: `clientId` is checked to be a JSON object) is kept as it is.
 *
 * @since 0.1.0
 * @category utils
 */
export const canonicalJson = (json: string): string => {
  try {
    return JSON.stringify(canonical(JSON.parse(json)))
  } catch {
    return json
  }
}

/**
 * The audience of client attributes (a JSON object text) in an organization: `none` for no
 * attributes (`""` or `"{}"`), else the hex SHA-256 of the organization and the canonical JSON.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (organizationId: OrganizationId, clientAttributesJson: string): string => {
  const json = clientAttributesJson === "" ? "{}" : canonicalJson(clientAttributesJson)
  return json === "{}" ? none : bytesToHex(sha256(utf8ToBytes(`${organizationId}\n${json}`)))
}

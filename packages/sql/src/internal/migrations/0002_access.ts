/**
 * Migration 2: access control beyond roles (which migration 1 creates): groups with their members
 * and roles, SCIM group mappings with the members the identity provider pushed, API keys, and the
 * audit log.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the tables of groups, SCIM group mappings, API keys and the audit log. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))

    yield* sql`CREATE TABLE ${name("groups")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      name text NOT NULL,
      display_name text,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("groups_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("groups_organization_id_key")} UNIQUE (organization_id, id)
    )`
    yield* sql`CREATE INDEX ${name("groups_created_idx")} ON ${name("groups")} (organization_id, created_at, id)`

    // Member and role sets are rows, not arrays: the composite foreign keys keep every reference
    // inside the organization, and deleting a member or a role drops it from every group by cascade.
    yield* sql`CREATE TABLE ${name("group_members")} (
      organization_id uuid NOT NULL,
      group_id uuid NOT NULL,
      member_id uuid NOT NULL,
      CONSTRAINT ${name("group_members_pkey")} PRIMARY KEY (organization_id, group_id, member_id),
      CONSTRAINT ${name("group_members_group_fkey")} FOREIGN KEY (organization_id, group_id)
        REFERENCES ${name("groups")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("group_members_member_fkey")} FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    // Serves "the groups of a member" (`groupRoleIds`) and the cascade from a deleted member.
    yield* sql`CREATE INDEX ${name("group_members_member_idx")} ON ${
      name("group_members")
    } (organization_id, member_id, group_id)`

    yield* sql`CREATE TABLE ${name("group_roles")} (
      organization_id uuid NOT NULL,
      group_id uuid NOT NULL,
      role_id uuid NOT NULL,
      CONSTRAINT ${name("group_roles_pkey")} PRIMARY KEY (organization_id, group_id, role_id),
      CONSTRAINT ${name("group_roles_group_fkey")} FOREIGN KEY (organization_id, group_id)
        REFERENCES ${name("groups")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("group_roles_role_fkey")} FOREIGN KEY (organization_id, role_id)
        REFERENCES ${name("roles")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("group_roles_role_idx")} ON ${
      name("group_roles")
    } (organization_id, role_id, group_id)`

    // A mapping targets exactly one of a role or a group. Their foreign keys have no action on
    // delete: deleting a role or group that a mapping targets fails, and the repositories answer
    // `Conflict` (the identity provider's configuration is never dropped silently). A NULL target
    // column is not checked (MATCH SIMPLE), which is what the other target mode needs.
    yield* sql`CREATE TABLE ${name("scim_group_mappings")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      display_name text NOT NULL,
      external_id text NOT NULL,
      target_mode text NOT NULL,
      role_id uuid,
      group_id uuid,
      CONSTRAINT ${name("scim_group_mappings_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("scim_group_mappings_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("scim_group_mappings_target_check")} CHECK (
        (target_mode = 'role' AND role_id IS NOT NULL AND group_id IS NULL) OR
        (target_mode = 'group' AND group_id IS NOT NULL AND role_id IS NULL)
      ),
      CONSTRAINT ${name("scim_group_mappings_role_fkey")} FOREIGN KEY (organization_id, role_id)
        REFERENCES ${name("roles")} (organization_id, id),
      CONSTRAINT ${name("scim_group_mappings_group_fkey")} FOREIGN KEY (organization_id, group_id)
        REFERENCES ${name("groups")} (organization_id, id)
    )`
    yield* sql`CREATE UNIQUE INDEX ${name("scim_group_mappings_external_id_key")} ON ${
      name("scim_group_mappings")
    } (organization_id, external_id)`
    // Listing order is byte order of the display name (core's `mappingOrder`), hence `COLLATE "C"`.
    yield* sql`CREATE INDEX ${name("scim_group_mappings_display_name_idx")} ON ${
      name("scim_group_mappings")
    } (organization_id, display_name COLLATE "C", id)`
    // The foreign key checks of deleting a role or a group look mappings up by target.
    yield* sql`CREATE INDEX ${name("scim_group_mappings_role_idx")} ON ${
      name("scim_group_mappings")
    } (organization_id, role_id) WHERE role_id IS NOT NULL`
    yield* sql`CREATE INDEX ${name("scim_group_mappings_group_idx")} ON ${
      name("scim_group_mappings")
    } (organization_id, group_id) WHERE group_id IS NOT NULL`

    yield* sql`CREATE TABLE ${name("scim_group_mapping_members")} (
      organization_id uuid NOT NULL,
      mapping_id uuid NOT NULL,
      member_id uuid NOT NULL,
      CONSTRAINT ${name("scim_group_mapping_members_pkey")} PRIMARY KEY (organization_id, mapping_id, member_id),
      CONSTRAINT ${name("scim_group_mapping_members_mapping_fkey")} FOREIGN KEY (organization_id, mapping_id)
        REFERENCES ${name("scim_group_mappings")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("scim_group_mapping_members_member_fkey")} FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("scim_group_mapping_members_member_idx")} ON ${
      name("scim_group_mapping_members")
    } (organization_id, member_id)`

    // Only the SHA-256 of the secret is stored. `assumed_roles` is a snapshot that must outlive the
    // roles it names, so it has no foreign key; neither has `created_by` (an admin who minted a
    // service account's key may leave, the key stays) nor `rotated_from` (history).
    yield* sql`CREATE TABLE ${name("api_keys")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      member_id uuid NOT NULL,
      name text NOT NULL,
      client_id text NOT NULL,
      assumed_roles uuid[] NOT NULL,
      inherit_all_roles boolean NOT NULL,
      full_member_access boolean NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      secret_hash text NOT NULL,
      created_by uuid NOT NULL,
      rotated_from uuid,
      CONSTRAINT ${name("api_keys_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("api_keys_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("api_keys_member_fkey")} FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    // Authentication finds a key by its hash alone, across organizations.
    yield* sql`CREATE UNIQUE INDEX ${name("api_keys_secret_hash_key")} ON ${name("api_keys")} (secret_hash)`
    // Keyset pages, newest first (read backwards): every key, or the keys of some owners.
    yield* sql`CREATE INDEX ${name("api_keys_created_idx")} ON ${name("api_keys")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("api_keys_member_created_idx")} ON ${
      name("api_keys")
    } (organization_id, member_id, created_at, id)`
    // A member belongs to one organization: without this, the planner multiplies the selectivities of
    // `organization_id` and `member_id`, expects a handful of rows, and sorts them instead of reading
    // `api_keys_member_created_idx` in order (fine for a handful, not for a member with many keys).
    yield* sql`CREATE STATISTICS ${name("api_keys_member_stats")} (dependencies) ON organization_id, member_id FROM ${
      name("api_keys")
    }`

    // Append-only. `actor_id` has no foreign key: an entry outlives the member it names.
    yield* sql`CREATE TABLE ${name("audit_logs")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      actor_id uuid,
      action text NOT NULL,
      resource_type text NOT NULL,
      resource_id text NOT NULL,
      details jsonb NOT NULL,
      auth_method text NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("audit_logs_pkey")} PRIMARY KEY (id)
    )`
    // Keyset pages, newest first (read backwards): unfiltered, by action, by actor.
    yield* sql`CREATE INDEX ${name("audit_logs_created_idx")} ON ${
      name("audit_logs")
    } (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("audit_logs_action_created_idx")} ON ${
      name("audit_logs")
    } (organization_id, action, created_at, id)`
    yield* sql`CREATE INDEX ${name("audit_logs_actor_created_idx")} ON ${
      name("audit_logs")
    } (organization_id, actor_id, created_at, id)`
    // An actor belongs to one organization (see `api_keys_member_stats`).
    yield* sql`CREATE STATISTICS ${name("audit_logs_actor_stats")} (dependencies) ON organization_id, actor_id FROM ${
      name("audit_logs")
    }`
  })

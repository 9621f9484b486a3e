/**
 * Migration 3: content: chats with their messages, cells and assets; data connectors with their
 * access grants; playbooks with their reports.
 *
 * Every name goes through the prefix and stays within 33 characters, so that a prefixed name (the
 * prefix is at most 30) never passes PostgreSQL's 63-byte identifier limit.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TablePrefix } from "../../TablePrefix.js"

/**
 * The schema `pg_trgm` lives in, installing it when the server offers it and this role may.
 *
 * Trigram indexes let `lower(x) LIKE '%term%'` (chat and playbook search) use an index. PGlite does
 * not ship `pg_trgm` unless its client loads the contrib bundle, and a host's database role may not
 * be allowed to create extensions: either way search still works, by filtering the organization's
 * rows. The attempt runs in a savepoint so that a refusal does not abort the migration, and the
 * catalog is read afterwards because another process may have created the extension meanwhile.
 */
const trigramSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const available = yield* sql`SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'`
  if (available.length > 0) {
    yield* sql.withTransaction(sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`).pipe(Effect.ignore)
  }
  const rows = yield* sql<{ schema: string }>`
    SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm'`
  return Option.fromNullable(rows[0]?.schema)
})

/** Creates the tables of chats, connectors and playbooks. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))

    // A chat hangs off its creator: deleting the member deletes the member's conversations.
    // `first_question` is the first user message, kept on the chat (written in the statement that
    // appends that message) so that search and previews read one table with one index.
    yield* sql`CREATE TABLE ${name("chats")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      creator_id uuid NOT NULL,
      model text NOT NULL,
      summary text NOT NULL,
      source text NOT NULL,
      status text NOT NULL,
      first_question text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("chats_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("chats_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("chats_creator_fkey")} FOREIGN KEY (organization_id, creator_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    // One index per sort of List Chats (ties by id); `name` sorts bytewise on the folded summary.
    yield* sql`CREATE INDEX ${name("chats_name_idx")} ON ${name("chats")}
      (organization_id, (lower(summary)) COLLATE "C", id)`
    yield* sql`CREATE INDEX ${name("chats_created_idx")} ON ${name("chats")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("chats_updated_idx")} ON ${name("chats")} (organization_id, updated_at, id)`
    // The creator filter (with the default sort), and the foreign key's cascade from members.
    yield* sql`CREATE INDEX ${name("chats_creator_idx")} ON ${
      name("chats")
    } (organization_id, creator_id, updated_at, id)`

    // `seq` is the append order: timestamps may tie, and messages list in the order appended.
    yield* sql`CREATE TABLE ${name("chat_messages")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      chat_id uuid NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      role text NOT NULL,
      content text NOT NULL,
      cell_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("chat_messages_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("chat_messages_chat_fkey")} FOREIGN KEY (organization_id, chat_id)
        REFERENCES ${name("chats")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("chat_messages_chat_idx")} ON ${
      name("chat_messages")
    } (organization_id, chat_id, seq)`

    // `seq` is the order a cell was first stored; replacing a cell keeps it, hence keeps its place.
    yield* sql`CREATE TABLE ${name("chat_cells")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      chat_id uuid NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      type text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      error text,
      role text,
      content text,
      code text,
      query text,
      connector_id integer,
      output text[],
      dataframe_preview text,
      execution_time_ms integer,
      CONSTRAINT ${name("chat_cells_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("chat_cells_chat_fkey")} FOREIGN KEY (organization_id, chat_id)
        REFERENCES ${name("chats")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("chat_cells_chat_idx")} ON ${
      name("chat_cells")
    } (organization_id, chat_id, created_at DESC, seq DESC)`

    // Assets name their cells without a foreign key: an asset may be stored before its cell.
    yield* sql`CREATE TABLE ${name("chat_assets")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      chat_id uuid NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      cell_id uuid NOT NULL,
      message_cell_id uuid,
      name text NOT NULL,
      type text NOT NULL,
      mime_type text NOT NULL,
      storage_key text,
      content text,
      size_bytes bigint,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("chat_assets_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("chat_assets_chat_fkey")} FOREIGN KEY (organization_id, chat_id)
        REFERENCES ${name("chats")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("chat_assets_one_body_check")} CHECK ((storage_key IS NULL) <> (content IS NULL))
    )`
    yield* sql`CREATE INDEX ${name("chat_assets_chat_idx")} ON ${
      name("chat_assets")
    } (organization_id, chat_id, created_at, seq)`

    // Connector ids are integers from one identity per store: never reused, even after a delete or
    // a rolled-back insert. A connector belongs to the organization, not to its owner (others may
    // hold owner grants and playbooks refer to it), so `owner_id` has no cascading foreign key.
    // `config` is the encoded configuration, password included (see ConnectorRepoSql).
    yield* sql`CREATE TABLE ${name("connectors")} (
      id integer GENERATED ALWAYS AS IDENTITY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      owner_id uuid NOT NULL,
      config jsonb NOT NULL,
      is_public boolean NOT NULL,
      allow_sql_write_operations boolean NOT NULL,
      include_db_session_metadata boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("connectors_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("connectors_organization_id_key")} UNIQUE (organization_id, id)
    )`

    // Grants in the order given. Principals carry no foreign key: a grant may name a role id that
    // core validated elsewhere, and a stale grant gives nothing to nobody.
    yield* sql`CREATE TABLE ${name("connector_grants")} (
      organization_id uuid NOT NULL,
      connector_id integer NOT NULL,
      position integer NOT NULL,
      member_id uuid,
      role_id uuid,
      access_type text NOT NULL,
      granted_by uuid NOT NULL,
      expires_at timestamptz,
      CONSTRAINT ${name("connector_grants_pkey")} PRIMARY KEY (organization_id, connector_id, position),
      CONSTRAINT ${name("connector_grants_connector_fkey")} FOREIGN KEY (organization_id, connector_id)
        REFERENCES ${name("connectors")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("connector_grants_principal_check")} CHECK ((member_id IS NULL) <> (role_id IS NULL))
    )`

    yield* sql`CREATE TABLE ${name("playbooks")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      owner_id uuid NOT NULL,
      name text NOT NULL,
      prompt text NOT NULL,
      status text NOT NULL,
      connector_ids integer[] NOT NULL,
      cron_string text,
      email_addresses text[] NOT NULL,
      chat_channel_id text,
      dataset_ids text[] NOT NULL,
      tagged_chat_user_ids text[] NOT NULL,
      selected_template_data_ids text[] NOT NULL,
      deployed_at timestamptz,
      next_run_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("playbooks_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("playbooks_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("playbooks_owner_fkey")} FOREIGN KEY (organization_id, owner_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("playbooks_name_idx")} ON ${name("playbooks")}
      (organization_id, (lower(name)) COLLATE "C", id)`
    yield* sql`CREATE INDEX ${name("playbooks_created_idx")} ON ${name("playbooks")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("playbooks_updated_idx")} ON ${name("playbooks")} (organization_id, updated_at, id)`
    yield* sql`CREATE INDEX ${name("playbooks_status_idx")} ON ${
      name("playbooks")
    } (organization_id, status, updated_at, id)`
    yield* sql`CREATE INDEX ${name("playbooks_owner_idx")} ON ${name("playbooks")} (organization_id, owner_id)`
    // The scheduler's only read (`listDue`), across organizations: exactly the rows it can return.
    yield* sql`CREATE INDEX ${name("playbooks_due_idx")} ON ${name("playbooks")} (next_run_at, id)
      WHERE status = 'deployed' AND next_run_at IS NOT NULL`

    // A report points at the chat its run produced, in the same organization.
    yield* sql`CREATE TABLE ${name("playbook_reports")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      playbook_id uuid NOT NULL,
      chat_id uuid NOT NULL,
      subject text NOT NULL,
      summary text NOT NULL,
      blocks jsonb NOT NULL,
      html_preview text NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("playbook_reports_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("playbook_reports_playbook_fkey")} FOREIGN KEY (organization_id, playbook_id)
        REFERENCES ${name("playbooks")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("playbook_reports_chat_fkey")} FOREIGN KEY (organization_id, chat_id)
        REFERENCES ${name("chats")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("playbook_reports_list_idx")} ON ${
      name("playbook_reports")
    } (organization_id, playbook_id, created_at DESC, id DESC)`
    yield* sql`CREATE INDEX ${name("playbook_reports_chat_idx")} ON ${
      name("playbook_reports")
    } (organization_id, chat_id)`

    const trigram = yield* trigramSchema
    if (Option.isSome(trigram)) {
      // Qualified, so that an extension installed in a schema off the search path still serves.
      const trgm = sql.literal(`"${trigram.value.replaceAll("\"", "\"\"")}".gin_trgm_ops`)
      yield* sql`CREATE INDEX ${name("chats_summary_trgm_idx")} ON ${
        name("chats")
      } USING gin ((lower(summary)) ${trgm})`
      yield* sql`CREATE INDEX ${name("chats_question_trgm_idx")} ON ${
        name("chats")
      } USING gin ((lower(first_question)) ${trgm})`
      yield* sql`CREATE INDEX ${name("playbooks_name_trgm_idx")} ON ${
        name("playbooks")
      } USING gin ((lower(name)) ${trgm})`
      yield* sql`CREATE INDEX ${name("playbooks_prompt_trgm_idx")} ON ${
        name("playbooks")
      } USING gin ((lower(prompt)) ${trgm})`
    }
  })

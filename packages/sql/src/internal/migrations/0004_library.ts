/**
 * Migration 4: library changes (changes, revisions, approvals, per-organization change numbers) and
 * the library store (content-addressed blobs, commits with their trees, refs).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the tables of `ChangeRepoSql` and `LibraryStoreSql`. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))

    // Authors (and approvers below) are referenced by id only, without a foreign key to members:
    // a change, like a commit, is library history that outlives its author's hard delete, and core
    // already treats a departed author or approver as one without roles.
    yield* sql`CREATE TABLE ${name("changes")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      number integer NOT NULL CHECK (number > 0),
      author_id uuid NOT NULL,
      author_email text NOT NULL,
      title text NOT NULL,
      description text NOT NULL,
      status text NOT NULL CHECK (status IN ('reserved', 'draft', 'open', 'approved', 'denied')),
      git_ref text NOT NULL,
      base_ref text,
      revision integer NOT NULL CHECK (revision > 0),
      touched_paths text[] NOT NULL,
      ai_generated boolean NOT NULL,
      chat_id uuid,
      approval_count integer NOT NULL CHECK (approval_count >= 0),
      required_approvals integer NOT NULL CHECK (required_approvals >= 0),
      auto_approved boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("changes_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("changes_number_key")} UNIQUE (organization_id, number)
    )`
    // Listings are newest first within an organization; the default one leaves auto-approved
    // changes out (partial index), and the status filter has its own index.
    yield* sql`CREATE INDEX ${name("changes_created_idx")} ON ${name("changes")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("changes_reviewed_created_idx")} ON ${
      name("changes")
    } (organization_id, created_at, id) WHERE NOT auto_approved`
    yield* sql`CREATE INDEX ${name("changes_status_created_idx")} ON ${
      name("changes")
    } (organization_id, status, created_at, id)`

    // The last change number handed out per organization: `nextNumber` increments it under the row
    // lock of `INSERT ... ON CONFLICT DO UPDATE`, so concurrent callers queue up on it.
    yield* sql`CREATE TABLE ${name("change_counters")} (
      organization_id uuid PRIMARY KEY REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      last_number integer NOT NULL CHECK (last_number >= 0)
    )`

    yield* sql`CREATE TABLE ${name("change_revisions")} (
      organization_id uuid NOT NULL,
      change_id uuid NOT NULL,
      revision integer NOT NULL CHECK (revision > 0),
      git_ref text NOT NULL,
      base_ref text,
      touched_paths text[] NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("change_revisions_pkey")} PRIMARY KEY (organization_id, change_id, revision),
      CONSTRAINT ${name("change_revisions_change_fkey")} FOREIGN KEY (organization_id, change_id)
        REFERENCES ${name("changes")} (organization_id, id) ON DELETE CASCADE
    )`

    // The primary key is the "once per change, revision and approver" rule that `addApproval`
    // relies on (`ON CONFLICT DO NOTHING`), and it serves the per-change listing.
    yield* sql`CREATE TABLE ${name("change_approvals")} (
      organization_id uuid NOT NULL,
      change_id uuid NOT NULL,
      revision integer NOT NULL CHECK (revision > 0),
      approver_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("change_approvals_pkey")} PRIMARY KEY (organization_id, change_id, revision, approver_id),
      CONSTRAINT ${name("change_approvals_change_fkey")} FOREIGN KEY (organization_id, change_id)
        REFERENCES ${name("changes")} (organization_id, id) ON DELETE CASCADE
    )`

    // Blobs are keyed by the SHA-256 of their content within an organization: stored once per
    // organization (no cross-tenant sharing, and they go with the organization, no collection).
    yield* sql`CREATE TABLE ${name("library_blobs")} (
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      content bytea NOT NULL,
      CONSTRAINT ${name("library_blobs_pkey")} PRIMARY KEY (organization_id, sha256)
    )`

    // A commit is immutable and named by the hash of its content (`ref`). Its parent must be a
    // commit of the same organization.
    yield* sql`CREATE TABLE ${name("library_commits")} (
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      ref text NOT NULL,
      parent_ref text,
      message text NOT NULL,
      author_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("library_commits_pkey")} PRIMARY KEY (organization_id, ref),
      CONSTRAINT ${name("library_commits_parent_fkey")} FOREIGN KEY (organization_id, parent_ref)
        REFERENCES ${name("library_commits")} (organization_id, ref) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("library_commits_parent_idx")} ON ${
      name("library_commits")
    } (organization_id, parent_ref)`

    // The tree of a commit: one row per file, pointing at its blob.
    yield* sql`CREATE TABLE ${name("library_commit_files")} (
      organization_id uuid NOT NULL,
      commit_ref text NOT NULL,
      path text NOT NULL,
      blob_sha256 text NOT NULL,
      CONSTRAINT ${name("library_commit_files_pkey")} PRIMARY KEY (organization_id, commit_ref, path),
      CONSTRAINT ${name("library_commit_files_commit_fkey")} FOREIGN KEY (organization_id, commit_ref)
        REFERENCES ${name("library_commits")} (organization_id, ref) ON DELETE CASCADE,
      CONSTRAINT ${name("library_commit_files_blob_fkey")} FOREIGN KEY (organization_id, blob_sha256)
        REFERENCES ${name("library_blobs")} (organization_id, sha256) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("library_commit_files_blob_idx")} ON ${
      name("library_commit_files")
    } (organization_id, blob_sha256)`

    // Named heads; today only `main`, moved by compare-and-set.
    yield* sql`CREATE TABLE ${name("library_refs")} (
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      name text NOT NULL,
      commit_ref text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT ${name("library_refs_pkey")} PRIMARY KEY (organization_id, name),
      CONSTRAINT ${name("library_refs_commit_fkey")} FOREIGN KEY (organization_id, commit_ref)
        REFERENCES ${name("library_commits")} (organization_id, ref) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("library_refs_commit_idx")} ON ${name("library_refs")} (organization_id, commit_ref)`
  })

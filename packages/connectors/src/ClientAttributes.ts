/**
 * Row-level security that SQL cannot forge, for POSTGRES connectors.
 *
 * With `include_db_session_metadata`, Sightline sets the caller's client attributes for each
 * transaction as `svc.client_attributes_json`. Any SQL in that transaction can change the setting
 * (`set_config(...)` in a CTE), so a policy must not read it directly when the SQL is written by
 * someone else: the end user behind a key, or a model at their request. With the connector's
 * `client_attributes_secret`, Sightline also sets `svc.client_attributes_signature`, an
 * HMAC-SHA256 of the JSON under the secret, and the database's policies read the attributes
 * through `sightline.client_attributes()`, which answers them only when the signature matches and
 * NULL otherwise. The secret lives in a table the connector's role cannot read (and connectors may
 * not log in as a superuser, which could read it).
 *
 * `installSql` is the SQL a database administrator runs once (pgcrypto needed):
 *
 * ```sql
 * CREATE POLICY by_region ON sales FOR SELECT
 *   USING (region = sightline.client_attributes() ->> 'region');
 * ```
 *
 * @since 0.1.0
 */
import * as Crypto from "node:crypto"

/**
 * The setting that carries the signature of `svc.client_attributes_json`.
 *
 * @since 0.1.0
 * @category constants
 */
export const signatureSetting = "svc.client_attributes_signature"

/**
 * The signature Sightline sets beside the attributes: HMAC-SHA256 of the JSON text, in hex.
 *
 * @since 0.1.0
 * @category utils
 */
export const signature = (attributesJson: string, secret: string): string =>
  Crypto.createHmac("sha256", secret).update(attributesJson, "utf8").digest("hex")

/**
 * What `installSql` needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface InstallOptions {
  /** The connector's `client_attributes_secret`. */
  readonly secret: string
  /** The connector's login role, which may call the function but never read the secret. */
  readonly role: string
  /** The schema of the function and of the secret's table (default `sightline`). */
  readonly schema?: string | undefined
}

const identifier = (name: string): string => `"${name.replaceAll("\"", "\"\"")}"`
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

/**
 * The statements that install `<schema>.client_attributes()` with the secret, run by a database
 * administrator (not the connector's role). Running them again replaces the secret.
 *
 * @since 0.1.0
 * @category utils
 */
export const installSql = (options: InstallOptions): ReadonlyArray<string> => {
  const schema = identifier(options.schema ?? "sightline")
  const role = identifier(options.role)
  return [
    "CREATE EXTENSION IF NOT EXISTS pgcrypto",
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${schema}.client_attributes_key (secret text NOT NULL)`,
    `REVOKE ALL ON ${schema}.client_attributes_key FROM PUBLIC`,
    `DELETE FROM ${schema}.client_attributes_key`,
    `INSERT INTO ${schema}.client_attributes_key VALUES (${literal(options.secret)})`,
    // SECURITY DEFINER: it reads the key with its owner's rights; a fixed search_path so no object
    // the caller creates stands in for the ones it uses.
    `CREATE OR REPLACE FUNCTION ${schema}.client_attributes() RETURNS jsonb
      LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
        SELECT CASE
          WHEN current_setting('${signatureSetting}', true) = encode(
            hmac(current_setting('svc.client_attributes_json', true), k.secret, 'sha256'), 'hex')
          THEN current_setting('svc.client_attributes_json', true)::jsonb
        END
        FROM ${schema}.client_attributes_key k
      $$`,
    `REVOKE ALL ON FUNCTION ${schema}.client_attributes() FROM PUBLIC`,
    `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
    `GRANT EXECUTE ON FUNCTION ${schema}.client_attributes() TO ${role}`
  ]
}

/**
 * What a tenant's connector may reach and log in as: the sockets of both drivers under core's
 * `NetworkAccess` rule (checked in the socket's own DNS lookup, so at every connection and on the
 * address connected to), and the check that the connector's role holds no superuser powers, which
 * a read-only transaction does not contain (`pg_read_file`, `COPY … TO PROGRAM`, `LOAD_FILE`).
 *
 * @internal
 */
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Dns from "node:dns"
import * as Net from "node:net"

/** What the operator lets connectors do beyond the defaults. */
export interface Access {
  /** Which addresses connectors may reach (default: the public internet only). */
  readonly network: NetworkAccess.Policy
  /** Let connectors log in as a superuser (or a role that reads or writes the server's files). */
  readonly allowSuperuser: boolean
}

/** The defaults: public addresses only, no superuser. */
export const defaults: Access = { network: NetworkAccess.publicOnly, allowSuperuser: false }

const resolve: NetworkAccess.Resolve = (hostname, callback) => Dns.lookup(hostname, { all: true }, callback)

/** Why a connection was refused by the network rule, for the person who set the connector up. */
export const refusedMessage = (host: string): string =>
  `${host} is in a private network or on this server, which connectors may not reach unless the operator ` +
  `allows it (in the standalone server: SIGHTLINE_CONNECTOR_ALLOW_PRIVATE=1, or the host in ` +
  `SIGHTLINE_CONNECTOR_ALLOW_HOSTS)`

/** Why a connector's role was refused. */
export const superuserMessage = (user: string): string =>
  `the connector's user "${user}" is a superuser or may read the server's files or run programs on it, which ` +
  `a read-only transaction does not stop; connect as a role with only the privileges it needs (SELECT on the ` +
  `tables to query)`

// Fails a socket the way a failed connection does, once the driver listens for its errors.
const refuse = (socket: Net.Socket, host: string): Net.Socket => {
  process.nextTick(() => socket.destroy(NetworkAccess.refusal(host)))
  return socket
}

/**
 * A socket factory for `pg`'s `stream` option. `pg` connects the socket itself, with
 * `connect(port, host)` or, for a host that is a directory, `connect(path)` (a Unix socket).
 */
export const pgStream = (policy: NetworkAccess.Policy) => (): Net.Socket => {
  const socket = new Net.Socket()
  const lookup = NetworkAccess.lookup(policy, resolve) as Net.LookupFunction
  const connect = socket.connect.bind(socket) as (...args: ReadonlyArray<unknown>) => Net.Socket
  socket.connect = ((...args: ReadonlyArray<unknown>) => {
    if (typeof args[0] === "string") {
      return NetworkAccess.isAllowed(policy, args[0], args[0]) ? connect(args[0]) : refuse(socket, args[0])
    }
    const port = Number(args[0])
    const host = String(args[1] ?? "localhost")
    // Node connects to a literal address without calling `lookup`: it is checked here.
    if (Net.isIP(host) !== 0 && !NetworkAccess.isAllowed(policy, host, host)) return refuse(socket, host)
    return connect({ port, host, lookup })
  }) as typeof socket.connect
  return socket
}

/** A socket factory for `mysql2`'s `stream` option, which expects a socket already connecting. */
export const mysqlStream = (policy: NetworkAccess.Policy, host: string, port: number) => (): Net.Socket => {
  if (Net.isIP(host) !== 0 && !NetworkAccess.isAllowed(policy, host, host)) return refuse(new Net.Socket(), host)
  return Net.connect({ host, port, lookup: NetworkAccess.lookup(policy, resolve) as Net.LookupFunction })
}

/**
 * PostgreSQL: is the logged-in role a superuser, or a member of a role that reads or writes the
 * server's files or runs programs there (`pg_has_role` is true of every role for a superuser)?
 */
export const postgresPowerQuery = `SELECT (r.rolsuper
  OR pg_has_role(current_user, 'pg_read_server_files', 'MEMBER')
  OR pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
  OR pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER')) AS powerful
  FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`

/**
 * MySQL and MariaDB: does the account hold `SUPER` or `FILE` (`LOAD_FILE`, `SELECT … INTO
 * OUTFILE`) globally? The account is matched as `CURRENT_USER()` names it (`user@host`).
 */
export const mysqlPowerQuery = `SELECT COUNT(*) AS powerful FROM information_schema.USER_PRIVILEGES
  WHERE GRANTEE = CONCAT('''',
    LEFT(CURRENT_USER(), LENGTH(CURRENT_USER()) - LENGTH(SUBSTRING_INDEX(CURRENT_USER(), '@', -1)) - 1),
    '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')
  AND PRIVILEGE_TYPE IN ('SUPER', 'FILE')`

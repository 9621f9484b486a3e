/**
 * The command line that isolates one sandbox process: resource limits (`prlimit`), the sandbox's own
 * user when the server runs as root (`setpriv`), and bubblewrap's namespaces and mounts.
 *
 * Inside, a process sees a read-only `/usr` (and the `/lib`, `/bin` links or directories of the host),
 * the few files of `/etc` that shared libraries, fonts and matplotlib need, its own `/proc`, `/dev` and
 * `/tmp`, the workspace at `/sandbox/files` (the only writable place that outlives it) and the kernel
 * driver read-only at `/opt/sightline`. Every namespace is new (no network, no view of the host's
 * processes) and the tree dies with the server.
 *
 * @internal
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"

/** Resource limits of one sandbox process. */
export interface ProcessLimits {
  readonly memoryBytes: number
  readonly cpuSeconds: number
  readonly processes: number
  readonly fileSizeBytes: number
  /** The size of the sandbox's `/tmp` (a tmpfs: host memory that RLIMIT_AS does not count). */
  readonly tmpBytes: number
}

/** What the isolation needs to know of the host. */
export interface Host {
  readonly bwrap: string
  readonly prlimit: string
  readonly setpriv: string | undefined
  readonly python: string
  /** How `/lib`, `/lib64`, `/bin` and `/sbin` appear inside: links where the host has links (merged /usr). */
  readonly systemArgs: ReadonlyArray<string>
}

const systemDirs = ["/lib", "/lib64", "/lib32", "/bin", "/sbin"]

// Shared-library alternatives (BLAS for numpy), the linker cache, fonts and matplotlib's defaults.
const etcFiles = [
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/fonts",
  "/etc/matplotlibrc"
]

const which = (name: string): string | undefined => {
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    const candidate = `${dir}/${name}`
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      continue
    }
  }
  return undefined
}

/** What to install for sandboxes, in the words of the error a user sees. */
export const installHint = "sandboxes need bubblewrap and Python with pandas and matplotlib: on Debian or Ubuntu, " +
  "apt-get install -y bubblewrap python3-pandas python3-matplotlib"

/** The user nobody, for the probe. */
const probeOwner = { uid: 65534, gid: 65534 }

/**
 * Finds the host's tools and proves that bubblewrap can make a sandbox here (user namespaces may be
 * turned off). The reason is returned instead when it cannot.
 */
export const detect = (python: string): { readonly host: Host } | { readonly reason: string } => {
  const bwrap = which("bwrap")
  const prlimit = which("prlimit")
  if (bwrap === undefined) return { reason: `bubblewrap (bwrap) is not installed; ${installHint}` }
  if (prlimit === undefined) return { reason: "prlimit (util-linux) is not installed" }
  if (!fs.existsSync(python)) return { reason: `${python} is not installed; ${installHint}` }
  const root = typeof process.getuid === "function" && process.getuid() === 0
  const setpriv = root ? which("setpriv") : undefined
  if (root && setpriv === undefined) return { reason: "setpriv (util-linux) is not installed" }
  const systemArgs = systemDirs.flatMap((dir) => {
    try {
      const stat = fs.lstatSync(dir)
      return stat.isSymbolicLink() ? ["--symlink", fs.readlinkSync(dir), dir] : ["--ro-bind", dir, dir]
    } catch {
      return []
    }
  })
  const host: Host = { bwrap, prlimit, setpriv, python, systemArgs }
  const probe = spawnSync(bwrap, [
    ...baseArgs(host, 1024 ** 2),
    ...dropTo(host, root ? probeOwner : undefined),
    python,
    "-c",
    "pass"
  ], {
    timeout: 10_000
  })
  if (probe.status !== 0) {
    const why = probe.stderr?.toString().trim() || probe.error?.message || `exit ${probe.status}`
    return { reason: `bubblewrap cannot create a sandbox on this host: ${why}` }
  }
  return { host }
}

// As root, bubblewrap makes the mounts itself (so the workspace may live in a directory only root can
// reach) and no user namespace is made; the command then drops to the sandbox's own user with no
// capabilities at all, which is also what makes the process limit count per sandbox. As any other
// user, a user namespace does the same unprivileged.
const namespaces = (host: Host) =>
  host.setpriv === undefined
    ? ["--unshare-all"]
    : ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]

const dropTo = (host: Host, owner: { readonly uid: number; readonly gid: number } | undefined) =>
  host.setpriv === undefined || owner === undefined
    ? ["--"]
    : [
      "--cap-add",
      "CAP_SETUID",
      "--cap-add",
      "CAP_SETGID",
      "--",
      host.setpriv,
      `--reuid=${owner.uid}`,
      `--regid=${owner.gid}`,
      "--clear-groups",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--no-new-privs"
    ]

const baseArgs = (host: Host, tmpBytes: number): Array<string> => [
  ...namespaces(host),
  "--die-with-parent",
  "--new-session",
  "--hostname",
  "sandbox",
  "--ro-bind",
  "/usr",
  "/usr",
  ...host.systemArgs,
  // bubblewrap makes missing parents private to root; the sandbox's user must be able to pass them.
  "--perms",
  "0755",
  "--dir",
  "/etc",
  ...etcFiles.flatMap((path) => ["--ro-bind-try", path, path]),
  "--proc",
  "/proc",
  "--dev",
  "/dev",
  "--perms",
  "1777",
  "--size",
  String(tmpBytes),
  "--tmpfs",
  "/tmp",
  "--clearenv",
  "--setenv",
  "PATH",
  "/usr/local/bin:/usr/bin:/bin",
  "--setenv",
  "HOME",
  "/tmp",
  "--setenv",
  "LANG",
  "C.UTF-8",
  "--setenv",
  "MPLBACKEND",
  "Agg",
  "--setenv",
  "MPLCONFIGDIR",
  "/tmp",
  "--setenv",
  "OPENBLAS_NUM_THREADS",
  "1",
  "--setenv",
  "PYTHONDONTWRITEBYTECODE",
  "1"
]

/** Where things are, for one sandbox process. */
export interface Mounts {
  /** The host directory mounted at `/sandbox/files`. */
  readonly workspace: string
  /** The host directory holding the kernel driver, mounted read-only at `/opt/sightline`. */
  readonly driverDir: string
  /** The sandbox's own user (the server runs as root), or none (the server's user). */
  readonly owner: { readonly uid: number; readonly gid: number } | undefined
}

/** The program and arguments that run `command` isolated, limited and in the workspace. */
export const command = (
  host: Host,
  mounts: Mounts,
  limits: ProcessLimits,
  env: Readonly<Record<string, string>>,
  command: ReadonlyArray<string>
): { readonly file: string; readonly args: ReadonlyArray<string> } => {
  const bwrapArgs = [
    ...baseArgs(host, limits.tmpBytes),
    "--perms",
    "0755",
    "--dir",
    "/sandbox",
    "--perms",
    "0755",
    "--dir",
    "/opt",
    "--bind",
    mounts.workspace,
    "/sandbox/files",
    "--ro-bind",
    mounts.driverDir,
    "/opt/sightline",
    "--chdir",
    "/sandbox/files",
    ...Object.entries(env).flatMap(([name, value]) => ["--setenv", name, value]),
    ...dropTo(host, mounts.owner),
    ...command
  ]
  const limited = [
    `--as=${limits.memoryBytes}`,
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.fileSizeBytes}`,
    // Counted per user: only meaningful when each sandbox has its own (the server runs as root).
    ...(mounts.owner === undefined ? [] : [`--nproc=${limits.processes}`]),
    "--"
  ]
  return { file: host.prlimit, args: [...limited, host.bwrap, ...bwrapArgs] }
}

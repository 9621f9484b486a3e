/**
 * nginx in front of server processes, configured as `docs/deploy.md` says (keep-alive upstreams,
 * SSE unbuffered with long timeouts, the sandbox channel closed to the outside, a dead process
 * passed over for the next one): for the tests and `pnpm bench:cluster`, where nginx is installed
 * (`.ci/run` installs it).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Whether nginx can run here; a reason when it cannot. */
export const unavailable: string | undefined = spawnSync("nginx", ["-v"]).status === 0
  ? undefined
  : "nginx is not installed (apt-get install nginx-light)"

/** The `http` block's part of `docs/deploy.md` for `backends` (host:port) on `port`. */
export const configuration = (backends: ReadonlyArray<string>, port: number): string =>
  `  upstream sightline {
${backends.map((backend) => `    server ${backend} max_fails=1 fail_timeout=5s;`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 1g;
    # The sandbox channel is for the processes, not for the outside.
    location /internal/ { return 404; }
    location / {
      proxy_pass http://sightline;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      # Answers stream as server-sent events: nothing is held back, and a quiet stream stays open.
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
    }
  }
`

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Starts nginx (its own prefix directory, in the foreground) in front of `backends` (base URLs). */
export const start = async (backends: ReadonlyArray<string>) => {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), "sightline-nginx-"))
  writeFileSync(
    join(dir, "nginx.conf"),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
${configuration(backends.map((backend) => new URL(backend).host), port)}}
`
  )
  const child: ChildProcess = spawn("nginx", ["-c", join(dir, "nginx.conf"), "-p", dir], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200) break
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    url,
    // SIGTERM: the master stops its workers too (a SIGKILLed master leaves them behind).
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGTERM")
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

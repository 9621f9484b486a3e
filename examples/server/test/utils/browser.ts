/**
 * Debian's Chromium driven by playwright-core, for the console's tests. Outside CI a machine without
 * Chromium skips those tests, saying so; under CI=true they fail instead (`.ci/run` installs it).
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium } from "playwright-core"

export const chromiumPath = "/usr/bin/chromium"

/** Why the browser tests cannot run here, if they cannot. */
export const unavailable = (): string | undefined =>
  existsSync(chromiumPath) ? undefined : `${chromiumPath} is missing (apt-get install -y chromium)`

/** Headless Chromium that never reaches for the network on its own. */
export const launch = (): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** Where screenshots go: the test output, beside the package (`test-results/console`). */
export const screenshotDir = (() => {
  const dir = join(new URL("../..", import.meta.url).pathname, "test-results", "console")
  mkdirSync(dir, { recursive: true })
  return dir
})()

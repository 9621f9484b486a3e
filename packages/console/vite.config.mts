import { defineConfig } from "vite"

// The console is served by the API's own server under `/`: every asset is bundled (no request ever
// leaves the machine), with hashed names so they can be cached for good.
export default defineConfig({
  root: "web",
  // Workspace packages (core's schedule rule) are bundled from their sources.
  resolve: { conditions: ["@sightline/source"] },
  base: "./",
  build: { outDir: "../build", emptyOutDir: true, chunkSizeWarningLimit: 4096, sourcemap: false },
  oxc: { jsx: { runtime: "automatic" } }
})

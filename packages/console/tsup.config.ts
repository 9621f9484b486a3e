import { defineConfig } from "tsup"

// The node side only (where the built app is); the app itself is built by Vite into `build/`.
export default defineConfig({
  entry: ["src/ConsoleAssets.ts"],
  format: ["esm"],
  dts: false,
  clean: true,
  sourcemap: true
})

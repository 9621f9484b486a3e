import { defineConfig } from "tsup"

// The standalone server as built JavaScript (`pnpm start` runs it): one file for its own modules;
// the packages it imports load from their built `dist/`.
export default defineConfig({
  entry: ["src/bin.ts"],
  format: ["esm"],
  dts: false,
  clean: true,
  sourcemap: true,
  external: [/^effect/, /^@effect\//, /^@sightline\//]
})

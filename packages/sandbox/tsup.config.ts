import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/*.ts"],
  format: ["esm", "cjs"],
  // Declarations come from tsc (`tsconfig.build.json`), as in the other packages.
  dts: false,
  clean: true,
  sourcemap: true,
  external: [/^effect/, /^@effect\//, /^@sightline\//]
})

import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/*.ts"],
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  external: [/^effect/, /^@effect\//, /^@sightline\//, /^@electric-sql\//, /^pg/]
})

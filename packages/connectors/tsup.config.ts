import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/*.ts"],
  format: ["esm", "cjs"],
  // Declarations come from tsc (`tsconfig.build.json`): the bundled dts drops a const that shares its
  // name with a type inside `export * as` namespaces, which breaks every `Schema` with a same-named type.
  dts: false,
  clean: true,
  sourcemap: true,
  // `import.meta.url` in the CommonJS build too: the DEMO worker resolves PGlite from it.
  shims: true,
  external: [/^effect/, /^@effect\//, /^@sightline\//, /^@electric-sql\//, /^pg/]
})

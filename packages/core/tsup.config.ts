import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/*.ts", "src/testing/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  external: [/^effect/, /^@effect\//, /^vitest/]
})

// How a Sightline server is bundled into one ES module file with esbuild, for `pnpm start` (the
// standalone server) and the benchmarks (their target servers). One file instead of a thousand ES
// modules is most of a fast start: resolving and linking each module cost more than the server's own
// start did (measured with `pnpm bench:start`).
import { build } from "esbuild"

/** Bundles the TypeScript entry point `entry` and what it imports into `outfile`. */
export const bundleServer = (entry, outfile) =>
  build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Workspace packages from their sources, as the tests and tsx read them.
    conditions: ["@sightline/source"],
    mainFields: ["module", "main"],
    // Loaded from node_modules at run time: PGlite reads its WebAssembly and data files next to its
    // own module, resvg and pg-native are native addons, and the console finds its built files
    // next to its own module.
    external: ["@electric-sql/pglite", "@electric-sql/pglite/*", "@resvg/resvg-js", "pg-native", "@sightline/console/*"],
    // Bundled CommonJS dependencies (pg, mysql2, nodemailer) call `require` for Node's modules.
    banner: {
      js: "import { createRequire as __sightlineRequire } from 'node:module'; " +
        "const require = __sightlineRequire(import.meta.url);"
    },
    // Without comments the file is ASCII, which V8 keeps in one byte a character (one comment in
    // another alphabet made all of it two); names stay, so stack traces read as the sources do.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: "linked",
    logLevel: "warning"
  })

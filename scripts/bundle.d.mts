/** Bundles the TypeScript entry point `entry` and what it imports into `outfile` (see bundle.mjs). */
export declare const bundleServer: (entry: string, outfile: string) => Promise<unknown>
/** The newest modification time under `path` (0 when it does not exist). */
export declare const newest: (path: string) => number
/** Builds the console's server-side module into its dist when a source is newer. */
export declare const ensureConsoleModule: () => void
/** Stops esbuild's service process (a later build starts it again). */
export declare const stopBundler: () => Promise<void>

/** Bundles the TypeScript entry point `entry` and what it imports into `outfile` (see bundle.mjs). */
export declare const bundleServer: (entry: string, outfile: string) => Promise<unknown>

// The two pure modules of lookml-parser that the LookML importer reads (its index also loads the
// file-globbing CLI); the package ships no types.
declare module "lookml-parser/lib/parse/index.js" {
  const parse: (text: string) => Record<string, unknown>
  export default parse
}
declare module "lookml-parser/lib/positions/get-positions.js" {
  export const getPositions: (parsed: unknown) => Record<string, unknown>
}

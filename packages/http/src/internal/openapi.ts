/**
 * Post-processing of the generated OpenAPI document, so that it validates and says what the server
 * really answers:
 * - component names become OpenAPI-legal (`^[a-zA-Z0-9._-]+$`): core's class identifiers such as
 *   `@sightline/core/Change/Diff` are shortened to `ChangeDiff`;
 * - `HttpApiDecodeError` is dropped: the envelope middleware answers every decode failure as the
 *   400 `InvalidRequestError` envelope, never in the platform's own shape;
 * - Effect's `$id` marks on `unknown` and `any` (`/schemas/unknown`) are dropped: each use would
 *   declare a schema resource of the same id, which JSON Schema tools refuse as ambiguous.
 */
const legal = /^[a-zA-Z0-9._-]+$/
const schemasRef = "#/components/schemas/"

const shortName = (name: string): string => name.replace(/^@sightline\/core\//, "").replace(/[^a-zA-Z0-9._-]/g, "")

const dropped = new Set(["HttpApiDecodeError", "Issue", "PropertyKey"])

const isDroppedRef = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "$ref" in value &&
  dropped.has(String((value as { $ref: unknown }).$ref).slice(schemasRef.length))

const prune = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(prune)
  if (typeof value !== "object" || value === null) return value
  const entries = Object.entries(value).map(([key, inner]) => [key, prune(inner)] as const)
  const object = Object.fromEntries(entries) as Record<string, unknown>
  if (typeof object.$id === "string" && object.$id.startsWith("/schemas/")) delete object.$id
  if (Array.isArray(object.anyOf)) {
    const kept = object.anyOf.filter((item) => !isDroppedRef(item))
    if (kept.length === 1) {
      const { anyOf: _, ...rest } = object
      return { ...rest, ...(kept[0] as object) }
    }
    object.anyOf = kept
  }
  return object
}

/** Makes the document valid OpenAPI 3.1 (see the module documentation). */
export const clean = (spec: Record<string, any>): Record<string, any> => {
  const names = Object.keys(spec.components?.schemas ?? {})
  const taken = new Set(names.filter((name) => legal.test(name)))
  const renames = new Map<string, string>()
  for (const name of names) {
    if (legal.test(name)) continue
    let renamed = shortName(name)
    if (taken.has(renamed)) renamed = `core.${renamed}`
    taken.add(renamed)
    renames.set(name, renamed)
  }
  let text = JSON.stringify(spec)
  for (const [from, to] of renames) {
    // References are JSON pointers: `/` is escaped as `~1` (and `~` as `~0`).
    const pointer = from.replaceAll("~", "~0").replaceAll("/", "~1")
    text = text.replaceAll(JSON.stringify(schemasRef + pointer), JSON.stringify(schemasRef + to))
  }
  const renamed = JSON.parse(text) as { components: { schemas: Record<string, unknown> } }
  const schemas = Object.fromEntries(
    Object.entries(renamed.components.schemas).map(([name, schema]) => [renames.get(name) ?? name, schema])
  )
  const pruned = prune({ ...renamed, components: { ...renamed.components, schemas } }) as typeof renamed
  for (const name of dropped) delete pruned.components.schemas[name]
  return wildcardPaths(pruned)
}

/**
 * A trailing router wildcard (`/files/*`, a workspace path with its slashes) written as OpenAPI
 * spells a parameter: `/files/{path}`, with the parameter named `path`.
 */
const wildcardPaths = <S extends Record<string, any>>(spec: S): S => {
  if (spec.paths === undefined) return spec
  const paths = Object.fromEntries(
    Object.entries(spec.paths as Record<string, Record<string, any>>).map(([path, operations]) =>
      path.endsWith("/*")
        ? [
          `${path.slice(0, -2)}/{path}`,
          Object.fromEntries(
            Object.entries(operations).map(([method, operation]) => [
              method,
              {
                ...operation,
                parameters: (operation.parameters ?? []).map((parameter: any) =>
                  parameter.name === "*"
                    ? { ...parameter, name: "path", description: "a workspace path; its slashes are not encoded" }
                    : parameter
                )
              }
            ])
          )
        ]
        : [path, operations]
    )
  )
  return { ...spec, paths }
}

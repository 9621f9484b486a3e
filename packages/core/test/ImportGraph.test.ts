/**
 * No package's modules import each other in a circle, types included: a circle hides which concept
 * depends on which, and one module of it can never be read, tested or split apart from the others.
 * The graph is every relative import of every package's `src/` (packages import one another only one
 * way, by their dependencies).
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const packages = resolve(new URL("../..", import.meta.url).pathname)

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith(".ts") || entry.name.endsWith(".tsx")
      ? [join(dir, entry.name)]
      : []
  )

const importsOf = (file: string): ReadonlyArray<string> =>
  [...readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)].map((match) =>
    resolve(dirname(file), match[1]!.replace(/\.js$/, ".ts"))
  )

/** The circles of a graph: for each strongly connected set of more than one module, its members. */
const circles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  // Tarjan's algorithm.
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      for (;;) {
        const member = stack.pop()!
        onStack.delete(member)
        component.push(member)
        if (member === node) break
      }
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

describe("the import graph", () => {
  it("finds the circles it is meant to find", () => {
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])
    expect(circles(graph)).toEqual([["a", "b", "c"]])
  })

  it("has no circle in any package's sources", () => {
    const files = readdirSync(packages).flatMap((name) => {
      try {
        return sources(join(packages, name, "src"))
      } catch {
        return []
      }
    })
    expect(files.length).toBeGreaterThan(300)
    const graph = new Map(files.map((file) => [file, importsOf(file)]))
    expect(circles(graph).map((circle) => circle.map((file) => relative(packages, file)))).toEqual([])
  })
})

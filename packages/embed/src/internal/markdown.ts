/**
 * The Markdown of answers, rendered to DOM nodes: paragraphs, headings, lists, tables, code, and
 * emphasis, code and links inside a line. Every piece of text is a text node and a link goes only to
 * http(s), so Markdown written by a model that read hostile data (`<img onerror=…>`,
 * `[x](javascript:…)`) renders inert. What it does not know stays text.
 */
import { append, h, safeHref } from "./dom.js"
import { table } from "./table.js"

const inlinePattern =
  /(\*\*[^*]+\*\*|`[^`]+`|\[[^\]]+\]\([^)\s]+\)|(?<![\w*])\*[^*\s][^*]*\*(?!\w)|(?<!\w)_[^_\s][^_]*_(?!\w))/

/** A line's text with its emphasis, code and links. */
export const inline = (text: string): Array<Node> => {
  const nodes: Array<Node> = []
  let rest = text
  while (rest.length > 0) {
    const match = inlinePattern.exec(rest)
    if (match === null) {
      nodes.push(document.createTextNode(rest))
      break
    }
    if (match.index > 0) nodes.push(document.createTextNode(rest.slice(0, match.index)))
    const token = match[0]
    if (token.startsWith("**")) nodes.push(h("strong", {}, ...inline(token.slice(2, -2))))
    else if (token.startsWith("`")) nodes.push(h("code", {}, token.slice(1, -1)))
    else if (token.startsWith("[")) {
      const label = token.slice(1, token.indexOf("]("))
      const href = safeHref(token.slice(token.indexOf("](") + 2, -1))
      nodes.push(
        href === undefined
          ? document.createTextNode(label)
          : h("a", { href, target: "_blank", rel: "noopener noreferrer" }, label)
      )
    } else nodes.push(h("em", {}, ...inline(token.slice(1, -1))))
    rest = rest.slice(match.index + token.length)
  }
  return nodes
}

const cellsOf = (line: string): Array<string> =>
  line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim())

const isSeparator = (line: string) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)

const numeric = /^-?[\d,]+(\.\d+)?%?$/

/** A whole answer's Markdown, as a fragment of block elements. */
export const markdown = (text: string): DocumentFragment => {
  const fragment = document.createDocumentFragment()
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (line.trim() === "") {
      i++
      continue
    }
    if (line.startsWith("```")) {
      const code: Array<string> = []
      i++
      while (i < lines.length && !lines[i]!.startsWith("```")) code.push(lines[i++]!)
      i++
      append(fragment, [h("pre", {}, h("code", {}, code.join("\n")))])
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      // Headings of an answer sit under the widget's own: at least a level 3.
      const level = Math.min(6, heading[1]!.length + 2)
      append(fragment, [h(`h${level}` as "h3", {}, ...inline(heading[2]!))])
      i++
      continue
    }
    if (line.trimStart().startsWith("|") && i + 1 < lines.length && isSeparator(lines[i + 1]!)) {
      const header = cellsOf(line)
      const rows: Array<Array<string>> = []
      i += 2
      while (i < lines.length && lines[i]!.trimStart().startsWith("|")) rows.push(cellsOf(lines[i++]!))
      append(fragment, [
        table(
          header.join(", "),
          header.map(inline),
          rows.map((row) => row.map((cell) => ({ content: inline(cell), numeric: numeric.test(cell) })))
        )
      ])
      continue
    }
    const bullet = /^\s*([-*]|\d+\.)\s+/
    if (bullet.test(line)) {
      const ordered = /^\s*\d+\./.test(line)
      const items: Array<HTMLElement> = []
      while (i < lines.length && bullet.test(lines[i]!)) {
        items.push(h("li", {}, ...inline(lines[i]!.replace(bullet, ""))))
        i++
      }
      append(fragment, [ordered ? h("ol", {}, items) : h("ul", {}, items)])
      continue
    }
    const paragraph: Array<string> = []
    while (
      i < lines.length && lines[i]!.trim() !== "" && !lines[i]!.startsWith("```") && !/^#{1,6}\s/.test(lines[i]!) &&
      !bullet.test(lines[i]!) && !(lines[i]!.trimStart().startsWith("|") && isSeparator(lines[i + 1] ?? ""))
    ) paragraph.push(lines[i++]!)
    append(fragment, [h("p", {}, ...inline(paragraph.join(" ")))])
  }
  return fragment
}

/**
 * Building the widget's DOM: elements with attributes and children, text always as text nodes. No
 * HTML string is ever parsed, so a value from the data (`<img onerror>`) stays text.
 */
type Child = Node | string | null | undefined | false

/** An element with attributes (`part`, `aria-*`, ...) and children; strings become text nodes. */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | undefined>> = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, value)
  }
  append(element, children)
  return element
}

/** Appends children (nested arrays flattened; empty ones skipped). */
export const append = (parent: Node, children: ReadonlyArray<Child | ReadonlyArray<Child>>): void => {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child)
  }
}

/** A link only to http(s): a `javascript:` or `data:` URL from an answer stays text. */
export const safeHref = (href: string): string | undefined => {
  try {
    const url = new URL(href, "https://invalid.example")
    return (url.protocol === "https:" || url.protocol === "http:") && /^https?:\/\//i.test(href) ? url.href : undefined
  } catch {
    return undefined
  }
}

/**
 * The one way the widget draws rows: a scrollable, focusable region with a header row, each cell's
 * content as nodes, numbers right-aligned. Result tables and the tables of an answer's Markdown both
 * come here.
 */
import { h } from "./dom.js"

/** A cell as drawn: its content, and whether it is a number. */
export interface DrawnCell {
  readonly content: ReadonlyArray<Node | string>
  readonly numeric: boolean
}

/** A table under `label` (its accessible name). */
export const table = (
  label: string,
  header: ReadonlyArray<string | ReadonlyArray<Node>>,
  rows: ReadonlyArray<ReadonlyArray<DrawnCell>>
): HTMLElement =>
  h(
    "div",
    { class: "table-scroll", part: "table", tabindex: "0", role: "region", "aria-label": label },
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, header.map((cell) => h("th", { scope: "col" }, cell)))),
      h(
        "tbody",
        {},
        rows.map((row) => h("tr", {}, row.map((cell) => h("td", cell.numeric ? { class: "num" } : {}, cell.content))))
      )
    )
  )

/** A value of a result's rows, numbers in the page's format. */
export const valueCell = (value: unknown, format: Intl.NumberFormat): DrawnCell =>
  typeof value === "number"
    ? { content: [format.format(value)], numeric: true }
    : { content: [value === null || value === undefined ? "" : String(value)], numeric: false }

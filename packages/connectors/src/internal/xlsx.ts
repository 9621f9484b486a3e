/**
 * Excel workbooks (`.xlsx`) as CSV files, a sheet each, for DuckDB to load (its own `excel`
 * extension is downloaded at run time, which a server without the internet cannot do).
 *
 * A workbook is a zip: before anything is inflated, its directory is read and a workbook whose
 * entries would inflate past `maxInflatedBytes`, or one entry more than `maxRatio` times its
 * compressed size (a zip bomb), is refused. Sheets are then read as streams, row by row, so no
 * sheet is held in memory.
 *
 * @internal
 */
import ExcelJS from "exceljs"
import * as fs from "node:fs"
import * as NodePath from "node:path"
import unzipper from "unzipper"

/** Past these, a workbook is refused before it is read. */
export interface Limits {
  readonly maxInflatedBytes: number
  readonly maxRatio: number
}

export const defaultLimits: Limits = { maxInflatedBytes: 1024 ** 3, maxRatio: 200 }

/** Why a workbook was refused: a message for its uploader. */
export class WorkbookError extends Error {}

/** A sheet, written as CSV. */
export interface Sheet {
  readonly name: string
  readonly path: string
}

const csvField = (value: unknown): string => {
  const text = value === null || value === undefined ? "" : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

/** A cell's value as text: a date as ISO (a day without its midnight), a formula as its result. */
const cellText = (value: ExcelJS.CellValue): string | number | boolean | null => {
  if (value === null || value === undefined) return null
  if (value instanceof Date) {
    const iso = value.toISOString()
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso
  }
  if (typeof value === "object") {
    if ("result" in value) return cellText(value.result as ExcelJS.CellValue)
    if ("richText" in value) return value.richText.map((part) => part.text).join("")
    if ("text" in value) return String(value.text)
    if ("error" in value) return null
    return null
  }
  return value
}

/** Refuses a zip bomb from its directory alone. */
const checkDirectory = async (path: string, limits: Limits) => {
  let directory: unzipper.CentralDirectory
  try {
    directory = await unzipper.Open.file(path)
  } catch {
    throw new WorkbookError("not an Excel workbook (.xlsx): the file is not a zip archive")
  }
  let inflated = 0
  for (const entry of directory.files) {
    inflated += entry.uncompressedSize
    if (entry.compressedSize > 0 && entry.uncompressedSize / entry.compressedSize > limits.maxRatio) {
      throw new WorkbookError(
        `refused: ${entry.path} would inflate ${
          Math.round(entry.uncompressedSize / entry.compressedSize)
        } times (a zip bomb?)`
      )
    }
  }
  if (inflated > limits.maxInflatedBytes) {
    throw new WorkbookError(`refused: it would inflate to ${inflated} bytes, past ${limits.maxInflatedBytes}`)
  }
  if (!directory.files.some((entry) => entry.path === "xl/workbook.xml")) {
    throw new WorkbookError("not an Excel workbook (.xlsx): it has no xl/workbook.xml")
  }
}

/** Writes each sheet of the workbook at `path` as a CSV file in `directory`; empty sheets are skipped. */
export const sheets = async (
  path: string,
  directory: string,
  limits: Limits = defaultLimits
): Promise<Array<Sheet>> => {
  await checkDirectory(path, limits)
  const written: Array<Sheet> = []
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, {
    worksheets: "emit",
    sharedStrings: "cache",
    hyperlinks: "ignore",
    styles: "cache",
    entries: "ignore"
  })
  let index = 0
  for await (const sheet of reader) {
    index += 1
    const csv = NodePath.join(directory, `sheet-${index}.csv`)
    const out = fs.createWriteStream(csv)
    let width = 0
    let rows = 0
    for await (const row of sheet) {
      // `values` is 1-based: its first slot is empty.
      const values = (row.values as Array<ExcelJS.CellValue>).slice(1).map(cellText)
      if (rows === 0) width = values.length
      const line = Array.from({ length: Math.max(width, values.length) }, (_, i) => csvField(values[i]))
      if (!out.write(`${line.join(",")}\n`)) await new Promise<void>((resolve) => out.once("drain", () => resolve()))
      rows += 1
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
    if (rows > 0) written.push({ name: (sheet as unknown as { name: string }).name, path: csv })
    else await fs.promises.rm(csv, { force: true })
  }
  if (written.length === 0) throw new WorkbookError("the workbook has no sheet with rows")
  return written
}

/**
 * Excel workbooks (`.xlsx`) as CSV files, a sheet each, for DuckDB to load (its own `excel`
 * extension is downloaded at run time, which a server without the internet cannot do).
 *
 * A workbook is a zip whose directory can lie (in the directory, or in the local headers and the
 * directory alike), so nothing it says is trusted:
 * 1. **Unpacked, counted.** The zip is read as a stream of its entries (as exceljs reads it), and
 *    the bytes actually inflated are counted across all of them: past `maxInflatedBytes`, or
 *    `maxRatio` times the file's size, the workbook is refused, wherever the bomb sits (a sheet,
 *    the shared strings, a part nobody reads).
 *    The parts a workbook needs are kept in a scratch directory.
 * 2. **Repacked in reading order.** They are packed again in the order exceljs's
 *    streaming reader needs: the workbook, its relationships, the shared strings and the styles
 *    before any sheet. Excel writes the shared strings after the sheets, and exceljs's reader then
 *    loses every text cell (exceljs issue 683).
 * 3. **Read, bounded by what it makes.** Sheets are read row by row into CSV, no wider than
 *    `maxColumns`, no larger in all than `maxOutputBytes`, and within `maxMillis`: a sheet's size
 *    says nothing of its input's.
 *
 * @internal
 */
import ExcelJS from "exceljs"
import JSZip from "jszip"
import * as fs from "node:fs"
import * as NodePath from "node:path"
import { Transform, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import unzipper from "unzipper"

/** Past these, a workbook is refused. */
export interface Limits {
  /** The bytes inflated from the zip, all entries together... */
  readonly maxInflatedBytes: number
  /** ...and no more than this many times the file's own size, past `minInflatedBytes`. */
  readonly maxRatio: number
  readonly minInflatedBytes: number
  /** The CSV written for all its sheets together. */
  readonly maxOutputBytes: number
  /** The columns of a sheet. */
  readonly maxColumns: number
  /** The time to read it. */
  readonly maxMillis: number
}

export const defaultLimits: Limits = {
  maxInflatedBytes: 512 * 1024 ** 2,
  maxRatio: 100,
  minInflatedBytes: 16 * 1024 ** 2,
  maxOutputBytes: 512 * 1024 ** 2,
  maxColumns: 1024,
  maxMillis: 60_000
}

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

// The parts of a workbook its sheets are read from, in the order exceljs's reader needs them.
const partOrder = (path: string): number | undefined => {
  switch (path) {
    case "[Content_Types].xml":
      return 0
    case "_rels/.rels":
      return 1
    case "xl/_rels/workbook.xml.rels":
      return 2
    case "xl/workbook.xml":
      return 3
    case "xl/sharedStrings.xml":
      return 4
    case "xl/styles.xml":
      return 5
  }
  const sheet = /^xl\/worksheets\/sheet(\d{1,6})\.xml$/.exec(path)
  return sheet === null ? undefined : 6 + Number(sheet[1])
}

/** Unpacks the parts into `scratch`, counting every byte inflated; their paths there, in reading order. */
const unpack = async (path: string, scratch: string, limits: Limits): Promise<Array<readonly [string, string]>> => {
  const size = (await fs.promises.stat(path)).size
  const limit = Math.min(limits.maxInflatedBytes, Math.max(limits.minInflatedBytes, size * limits.maxRatio))
  let inflated = 0
  const kept = new Map<string, string>()
  const counted = () =>
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        inflated += chunk.length
        if (inflated > limit) return done(new WorkbookError(`refused: it inflates past ${limit} bytes (a zip bomb?)`))
        done(null, chunk)
      }
    })
  const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() })
  const zip = fs.createReadStream(path).pipe(unzipper.Parse({ forceStream: true }))
  try {
    for await (const entry of zip as AsyncIterable<unzipper.Entry>) {
      const order = partOrder(entry.path)
      // A part named twice is read once: the first.
      if (order === undefined || kept.has(entry.path)) {
        await pipeline(entry, counted(), discard())
        continue
      }
      const file = NodePath.join(scratch, `part-${kept.size}`)
      kept.set(entry.path, file)
      await pipeline(entry, counted(), fs.createWriteStream(file))
    }
  } catch (error) {
    zip.destroy()
    if (error instanceof WorkbookError) throw error
    throw new WorkbookError("not an Excel workbook (.xlsx): the file is not a zip archive that can be read")
  }
  if (!kept.has("xl/workbook.xml")) throw new WorkbookError("not an Excel workbook (.xlsx): it has no xl/workbook.xml")
  return [...kept].sort(([a], [b]) => partOrder(a)! - partOrder(b)!)
}

/**
 * Packs the parts, in their order, as a zip at `to`, streamed. Deflated (at the fastest level): a
 * streamed entry's size comes after its data, and only a deflated one tells a streaming reader
 * where it ends.
 */
const repack = async (parts: ReadonlyArray<readonly [string, string]>, to: string) => {
  const zip = new JSZip()
  for (const [name, file] of parts) zip.file(name, fs.createReadStream(file))
  await pipeline(
    zip.generateNodeStream({ compression: "DEFLATE", compressionOptions: { level: 1 }, streamFiles: true }),
    fs.createWriteStream(to)
  )
}

/** Writes each sheet of the workbook at `path` as a CSV file in `directory`; empty sheets are skipped. */
export const sheets = async (
  path: string,
  directory: string,
  limits: Limits = defaultLimits
): Promise<Array<Sheet>> => {
  const deadline = Date.now() + limits.maxMillis
  const scratch = await fs.promises.mkdtemp(NodePath.join(directory, "parts-"))
  const ordered = NodePath.join(directory, "ordered.xlsx")
  try {
    await repack(await unpack(path, scratch, limits), ordered)
  } finally {
    await fs.promises.rm(scratch, { recursive: true, force: true })
  }
  const written: Array<Sheet> = []
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(ordered, {
    worksheets: "emit",
    sharedStrings: "cache",
    hyperlinks: "ignore",
    styles: "cache",
    entries: "ignore"
  })
  let output = 0
  let index = 0
  for await (const sheet of reader) {
    index += 1
    const name = (sheet as unknown as { name: string }).name
    const csv = NodePath.join(directory, `sheet-${index}.csv`)
    const out = fs.createWriteStream(csv)
    let width = 0
    let rows = 0
    try {
      for await (const row of sheet) {
        // `values` is 1-based: its first slot is empty.
        const values = (row.values as Array<ExcelJS.CellValue>).slice(1).map(cellText)
        if (rows === 0) width = values.length
        const columns = Math.max(width, values.length)
        if (columns > limits.maxColumns) {
          throw new WorkbookError(`refused: sheet ${name} has ${columns} columns, past ${limits.maxColumns}`)
        }
        const line = `${Array.from({ length: columns }, (_, i) => csvField(values[i])).join(",")}\n`
        output += Buffer.byteLength(line)
        if (output > limits.maxOutputBytes) {
          throw new WorkbookError(`refused: its sheets make more than ${limits.maxOutputBytes} bytes of rows`)
        }
        if (Date.now() > deadline) {
          throw new WorkbookError(`refused: reading it took longer than ${limits.maxMillis / 1000} seconds`)
        }
        if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()))
        rows += 1
      }
    } finally {
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve()))
      )
    }
    if (rows > 0) written.push({ name, path: csv })
    else await fs.promises.rm(csv, { force: true })
  }
  await fs.promises.rm(ordered, { force: true })
  if (written.length === 0) throw new WorkbookError("the workbook has no sheet with rows")
  return written
}

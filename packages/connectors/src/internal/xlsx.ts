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
 * 2. **Read from the parts.** exceljs's own reader is driven part by part over the unpacked files:
 *    the relationships, the workbook, the shared strings and the styles, then each sheet. Its
 *    streaming `WorkbookReader` reads a zip as it arrives, and then both loses every text cell when
 *    the shared strings come after the sheets (as Excel writes them, exceljs issue 683) and, on a
 *    loaded machine, now and then every sheet past the first.
 * 3. **Read, bounded by what it makes.** Sheets are read row by row into CSV, no wider than
 *    `maxColumns`, no larger in all than `maxOutputBytes`, and within `maxMillis`: a sheet's size
 *    says nothing of its input's.
 *
 * @internal
 */
import ExcelJS from "exceljs"
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

// The parts of a workbook its sheets are read from.
const wanted = (path: string) =>
  path === "xl/_rels/workbook.xml.rels" || path === "xl/workbook.xml" || path === "xl/sharedStrings.xml" ||
  path === "xl/styles.xml" || sheetNumber(path) !== undefined

const sheetNumber = (path: string): number | undefined => {
  const sheet = /^xl\/worksheets\/sheet(\d{1,6})\.xml$/.exec(path)
  return sheet === null ? undefined : Number(sheet[1])
}

/** Unpacks the parts into `scratch`, counting every byte inflated: each part's path there. */
const unpack = async (path: string, scratch: string, limits: Limits): Promise<Map<string, string>> => {
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
      // A part named twice is read once: the first.
      if (!wanted(entry.path) || kept.has(entry.path)) {
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
  return kept
}

/**
 * The steps of exceljs's streaming reader (4.4) that `WorkbookReader.parse` takes for each zip
 * entry, here taken for each unpacked part: each reads a stream of the part's bytes.
 */
interface ReaderSteps {
  _parseRels(part: NodeJS.ReadableStream): Promise<void>
  _parseWorkbook(part: NodeJS.ReadableStream): Promise<void>
  _parseSharedStrings(part: NodeJS.ReadableStream): AsyncIterable<unknown>
  _parseStyles(part: NodeJS.ReadableStream): Promise<void>
  _parseWorksheet(
    part: NodeJS.ReadableStream,
    sheetNo: string
  ): Iterable<{ readonly value: AsyncIterable<ExcelJS.Row> & { readonly name: string } }>
}

/** The sheets of the unpacked workbook `parts`, in their parts' order, each read as it is iterated. */
async function* worksheets(parts: ReadonlyMap<string, string>) {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(
    "",
    { worksheets: "emit", sharedStrings: "cache", hyperlinks: "ignore", styles: "cache", entries: "ignore" }
  ) as unknown as ReaderSteps
  const read = (part: string) => fs.createReadStream(parts.get(part)!)
  if (parts.has("xl/_rels/workbook.xml.rels")) await reader._parseRels(read("xl/_rels/workbook.xml.rels"))
  await reader._parseWorkbook(read("xl/workbook.xml"))
  if (parts.has("xl/sharedStrings.xml")) {
    for await (const _ of reader._parseSharedStrings(read("xl/sharedStrings.xml"))) {
      /* cached */
    }
  }
  if (parts.has("xl/styles.xml")) await reader._parseStyles(read("xl/styles.xml"))
  const numbered = [...parts.keys()].flatMap((part) => {
    const number = sheetNumber(part)
    return number === undefined ? [] : [[part, number] as const]
  }).sort(([, a], [, b]) => a - b)
  for (const [part, number] of numbered) {
    for (const { value } of reader._parseWorksheet(read(part), String(number))) yield value
  }
}

/** Writes each sheet of the workbook at `path` as a CSV file in `directory`; empty sheets are skipped. */
export const sheets = async (
  path: string,
  directory: string,
  limits: Limits = defaultLimits
): Promise<Array<Sheet>> => {
  const deadline = Date.now() + limits.maxMillis
  const scratch = await fs.promises.mkdtemp(NodePath.join(directory, "parts-"))
  try {
    return await written(await unpack(path, scratch, limits), directory, deadline, limits)
  } finally {
    await fs.promises.rm(scratch, { recursive: true, force: true })
  }
}

const written = async (
  parts: ReadonlyMap<string, string>,
  directory: string,
  deadline: number,
  limits: Limits
): Promise<Array<Sheet>> => {
  const written: Array<Sheet> = []
  let output = 0
  let index = 0
  for await (const sheet of worksheets(parts)) {
    index += 1
    const name = sheet.name
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
  if (written.length === 0) throw new WorkbookError("the workbook has no sheet with rows")
  return written
}

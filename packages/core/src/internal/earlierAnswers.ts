/**
 * A chat's earlier answers as a follow-up needs them (`LanguageModel.EarlierAnswer`): for each of
 * the latest answers that showed a table, the question, the last table's first rows, and how its
 * query read the question. Read when a run starts, from the chat's messages, the tables of those
 * answers only, and their cells.
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Asset from "../Asset.js"
import type * as Chat from "../Chat.js"
import type { ChatRepo } from "../ChatRepo.js"
import type { ChatId, OrganizationId } from "../Ids.js"
import type * as LanguageModel from "../LanguageModel.js"

/** The most earlier answers a run is given. */
export const answers = 3

/** The most rows of each. */
export const rows = 20

const decodeTable = Schema.decodeUnknownOption(Schema.parseJson(Asset.TableContent))

/** The earlier answers of the chat whose `history` this is (the run's question last), oldest first. */
export const read = (
  repo: ChatRepo.Service,
  organizationId: OrganizationId,
  chatId: ChatId,
  history: ReadonlyArray<Chat.MessageRecord>
): Effect.Effect<ReadonlyArray<LanguageModel.EarlierAnswer>> =>
  Effect.gen(function*() {
    // Each answer with the question it answered.
    const asked = history.flatMap((message, i) => {
      const question = history[i - 1]
      return message.role === "assistant" && question?.role === "user" ? [{ question, answer: message }] : []
    }).slice(-answers)
    if (asked.length === 0) return []
    const tables = (yield* repo.listAssets(organizationId, chatId, asked.map(({ answer }) => answer.cell_id)))
      .filter((asset) => asset.type === "table" && asset.content !== undefined)
    const earlier: Array<LanguageModel.EarlierAnswer> = []
    for (const { answer, question } of asked) {
      const table = Option.getOrUndefined(Arr.findLast(tables, (asset) => asset.message_cell_id === answer.cell_id))
      const content = table === undefined ? Option.none() : decodeTable(table.content)
      if (table === undefined || Option.isNone(content)) continue
      const cell = yield* repo.getCell(organizationId, chatId, table.cell_id)
      const query = Option.getOrUndefined(cell)
      earlier.push({
        question: question.content,
        cell_id: table.cell_id,
        ...(query?.semantic_query === undefined ? {} : { semantic_query: query.semantic_query }),
        ...(query?.reading === undefined ? {} : { reading: query.reading.text }),
        ...(query?.query === undefined ? {} : { sql: query.query }),
        ...(query?.connector_id === undefined ? {} : { connector_id: query.connector_id }),
        columns: content.value.columns.map((column) => column.name),
        rows: content.value.rows.slice(0, rows),
        row_count: content.value.row_count
      })
    }
    return earlier
  })

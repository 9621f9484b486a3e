/**
 * The `multipart/form-data` variant of `POST /v2/chats` and `POST /v2/chats/stream`: the same fields
 * as the JSON body, each a form field. `tools` is JSON text; `connector_ids` is repeated, or one
 * field of comma-separated ids, or JSON. File parts (`files`, up to 10): tables become a FILES
 * connector of the asker's, and every file goes to the chat's sandbox where there is one; the
 * handler reads them from the request (`uploadedFiles`) and hands them to the agent.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Multipart from "@effect/platform/Multipart"
import * as Chat from "@sightline/core/Chat"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * The form fields as they arrive: text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatFormFields = Schema.Struct({
  question: Schema.String,
  chat_id: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  /** The `tools` object as JSON text. */
  tools: Schema.optional(Schema.String),
  /** Repeated, comma-separated, or a JSON array. */
  connector_ids: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
  /** Read by the handler from the request (`uploadedFiles`); the form only checks how many there are. */
  files: Schema.optional(
    Multipart.FilesSchema.pipe(Schema.maxItems(10)).annotations({
      jsonSchema: { type: "array", items: { type: "string", format: "binary" }, maxItems: 10 },
      description:
        "Files of the question (at most 10): tables (CSV, TSV, Excel, Parquet, JSON, NDJSON) become a FILES connector of the asker's; every file goes to the chat's sandbox where there is one"
    })
  )
})

const integerList = (values: ReadonlyArray<string>): Array<unknown> =>
  values.flatMap((value) => {
    const trimmed = value.trim()
    if (trimmed.startsWith("[")) {
      try {
        const parsed = JSON.parse(trimmed)
        return Array.isArray(parsed) ? parsed : [parsed]
      } catch {
        return [trimmed]
      }
    }
    return trimmed === "" ? [] : trimmed.split(",").map((id) => (/^\s*\d+\s*$/.test(id) ? Number(id) : id.trim()))
  })

const fromForm = Schema.transformOrFail(ChatFormFields, Schema.encodedSchema(Chat.StreamChatRequest), {
  strict: false,
  decode: (form, _, ast) => {
    let tools: unknown
    if (form.tools !== undefined) {
      try {
        tools = JSON.parse(form.tools)
      } catch {
        return ParseResult.fail(new ParseResult.Type(ast, form.tools, "tools: not a JSON object"))
      }
    }
    const ids = form.connector_ids === undefined
      ? undefined
      : integerList(typeof form.connector_ids === "string" ? [form.connector_ids] : form.connector_ids)
    return Effect.succeed({
      question: form.question,
      ...(form.chat_id === undefined ? {} : { chat_id: form.chat_id }),
      ...(form.model === undefined ? {} : { model: form.model }),
      ...(tools === undefined ? {} : { tools }),
      ...(ids === undefined ? {} : { connector_ids: ids })
    })
  },
  encode: (request, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, request, "a chat form is never encoded"))
})

/**
 * The multipart body of a chat request, decoded to the same `StreamChatRequest` as the JSON body.
 *
 * @since 0.1.0
 * @category constants
 */
export const ChatForm = HttpApiSchema.Multipart(Schema.compose(fromForm, Chat.StreamChatRequest), {
  maxParts: Option.some(20),
  maxFieldSize: 1024 * 1024,
  maxFileSize: Option.some(50 * 1024 * 1024)
})

/**
 * The files of a multipart chat request, read from the parts the platform already stored while
 * decoding the form (a request's multipart body is read once and kept); none for a JSON request.
 *
 * @since 0.1.0
 * @category utils
 */
export const uploadedFiles = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!(request.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data")) return []
  const form = yield* request.multipart
  const parts = form.files
  if (parts === undefined || typeof parts === "string") return []
  const fs = yield* FileSystem.FileSystem
  return yield* Effect.forEach(
    (parts as ReadonlyArray<unknown>).filter(Multipart.isPersistedFile),
    (file) => Effect.map(fs.readFile(file.path), (bytes) => ({ name: file.name, bytes, path: file.path }))
  )
})

/**
 * A chat request body: multipart or JSON (the form's text fields are a valid JSON body too, so a
 * JSON body may match either member; both decode to the same request).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatRequestBody = Schema.Union(
  ChatForm,
  // A form's file part must not slip through as an ignored field of the JSON member.
  Chat.StreamChatRequest.annotations({ parseOptions: { onExcessProperty: "error" } })
)

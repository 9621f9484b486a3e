/**
 * The Sandcastles group of /v2: sandboxes with a persistent Python kernel, one-shot commands,
 * connector rows loaded into DataFrames, workspace files, and the Context Library mounted at
 * `library/` whose edits are filed as changes.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Change from "@sightline/core/Change"
import * as Execution from "@sightline/core/Execution"
import { SandboxId } from "@sightline/core/Ids"
import * as Sandbox from "@sightline/core/Sandbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: SandboxId })

/**
 * The path of a file operation: the sandbox and the file's path in the workspace (the rest of the URL).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilePathParams = Schema.Struct({ id: SandboxId, "*": Schema.String })

/**
 * The largest upload, bytes.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024

/**
 * The upload form, as documented: the file, and optionally where to put it (default: its own name at the root).
 *
 * @since 0.1.0
 * @category constants
 */
export const UploadForm = HttpApiSchema.MultipartStream(
  Schema.Struct({
    file: Schema.Unknown.annotations({ jsonSchema: { type: "string", format: "binary" } }),
    path: Schema.optional(Schema.String).annotations({
      description: "the workspace path to write (default: the file's own name at the root)"
    })
  }),
  { maxParts: Option.some(4), maxFileSize: Option.some(MAX_UPLOAD_BYTES) }
)

// Every field is optional, so the body may be left out altogether (`curl -X POST` with no body).
const CreateBody = Schema.transform(
  Schema.NullOr(strict(Sandbox.CreateRequest)),
  Schema.typeSchema(Sandbox.CreateRequest),
  { strict: true, decode: (body) => body ?? {}, encode: (body) => body }
)

const bytes = (description: string) =>
  HttpApiSchema.Text({ contentType: "application/octet-stream" }).annotations({ description })

/**
 * The Sandcastles operations.
 *
 * @since 0.1.0
 * @category models
 */
export class SandcastlesApi extends HttpApiGroup.make("sandcastles")
  .add(
    HttpApiEndpoint.get("list", "/v2/sandcastles")
      .setUrlParams(Sandbox.ListParams)
      .addSuccess(Sandbox.ListResponse)
      .annotate(OpenApi.Summary, "List sandboxes (your own; every member's for organization:read)")
  )
  .add(
    HttpApiEndpoint.post("create", "/v2/sandcastles")
      .setPayload(CreateBody)
      .addSuccess(Sandbox.CreateResponse, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Starts a sandbox with a fresh Python kernel and the Context Library mounted at `library/` (pruned to " +
          "what you may read, OWNERS files left out). With `sandbox_id`, restarts your own stopped sandbox. " +
          "409 when this server cannot run sandboxes, saying what to install."
      )
      .annotate(OpenApi.Summary, "Start (or restart) a sandbox")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/sandcastles/:id")
      .setPath(IdPath)
      .addSuccess(Sandbox.Detail)
      .annotate(OpenApi.Summary, "A sandbox's status, with its kernel's memory and dataframes")
  )
  .add(
    HttpApiEndpoint.del("stop", "/v2/sandcastles/:id")
      .setPath(IdPath)
      .addSuccess(Sandbox.SuccessResponse)
      .annotate(OpenApi.Summary, "Stop a sandbox and discard its workspace")
  )
  .add(
    HttpApiEndpoint.get("executions", "/v2/sandcastles/:id/executions")
      .setPath(IdPath)
      .setUrlParams(Execution.ListParams)
      .addSuccess(Execution.ListResponse)
      .annotate(OpenApi.Summary, "List a sandbox's recorded executions, newest first (kept 30 days)")
  )
  .add(
    HttpApiEndpoint.post("execute", "/v2/sandcastles/:id/execute")
      .setPath(IdPath)
      .setPayload(strict(Sandbox.ExecuteRequest))
      .addSuccess(Sandbox.ExecuteResponse)
      .annotate(
        OpenApi.Description,
        "Runs Python in the sandbox's persistent kernel. Prints and the last expression's value are `output`; an " +
          "exception is `error` (200). New workspace files (matplotlib figures are saved as PNG) are listed in " +
          "`files` with their download URL; new or changed DataFrames in `dataframes`."
      )
      .annotate(OpenApi.Summary, "Run Python in the kernel")
  )
  .add(
    HttpApiEndpoint.post("query", "/v2/sandcastles/:id/query")
      .setPath(IdPath)
      .setPayload(strict(Sandbox.QueryRequest))
      .addSuccess(Sandbox.QueryResponse)
      .annotate(
        OpenApi.Description,
        "Runs SQL (`query`) or a saved library query (`library_path`, with `params`) on a connector, read-only " +
          "unless the connector allows writes and with your key's client metadata bound, and loads the rows into " +
          "the kernel as a pandas DataFrame (`dataframe_name`, default `df`). The connector's credentials never " +
          "enter the sandbox. A failing query is 400 with the database's message."
      )
      .annotate(OpenApi.Summary, "Load connector rows into a DataFrame")
  )
  .add(
    HttpApiEndpoint.post("exec", "/v2/sandcastles/:id/exec")
      .setPath(IdPath)
      .setPayload(strict(Sandbox.ExecRequest))
      .addSuccess(Sandbox.ExecResponse)
      .annotate(OpenApi.Summary, "Run a one-shot bash or python command (a non-zero exit is a result)")
  )
  .add(
    HttpApiEndpoint.get("listFiles", "/v2/sandcastles/:id/files")
      .setPath(IdPath)
      .setUrlParams(Sandbox.ListFilesParams)
      .addSuccess(Sandbox.ListFilesResponse)
      .annotate(OpenApi.Summary, "List a workspace directory (dotfiles hidden)")
  )
  .add(
    HttpApiEndpoint.post("upload", "/v2/sandcastles/:id/files")
      .setPath(IdPath)
      .setPayload(UploadForm)
      .addSuccess(Sandbox.UploadResult)
      .annotate(OpenApi.Summary, "Upload a file (multipart `file`, optional `path`)")
  )
  .add(
    HttpApiEndpoint.get("download", "/v2/sandcastles/:id/files/*")
      .setPath(FilePathParams)
      .addSuccess(bytes("the file's bytes"))
      .annotate(
        OpenApi.Summary,
        "Download a workspace file (traversal, dotfiles and symlinks out of the workspace refused; OWNERS never served)"
      )
  )
  .add(
    HttpApiEndpoint.del("deleteFile", "/v2/sandcastles/:id/files/*")
      .setPath(FilePathParams)
      .addSuccess(Sandbox.SuccessResponse)
      .annotate(OpenApi.Summary, "Delete a workspace file or directory")
  )
  .add(
    HttpApiEndpoint.get("libraryDiff", "/v2/sandcastles/:id/library/diff")
      .setPath(IdPath)
      .addSuccess(Change.LibraryDiff)
      .annotate(OpenApi.Summary, "What changed under library/ against the mounted snapshot")
  )
  .add(
    HttpApiEndpoint.post("libraryChange", "/v2/sandcastles/:id/library/changes")
      .setPath(IdPath)
      .setPayload(strict(Change.CreateLibraryChange))
      .addSuccess(Change.LibraryChangeResult, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Files the library edits as a change (`change_number`: a new revision of your change). Nothing staged is " +
          "400. With merge conflicts the change is `reserved` and `library/` is re-materialised on main with " +
          "conflict markers and `.rej` files; resolve, delete the `.rej` files and resubmit with `change_number`."
      )
      .annotate(OpenApi.Summary, "File library edits as a change")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandcastles")
{}

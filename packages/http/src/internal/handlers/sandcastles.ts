import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Multipart from "@effect/platform/Multipart"
import type { SandboxId } from "@sightline/core/Ids"
import * as Sandbox from "@sightline/core/Sandbox"
import * as Sandboxes from "@sightline/core/Sandboxes"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import * as HttpErrors from "../../HttpErrors.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

const invalid = (message: string) => new HttpErrors.InvalidRequest({ error: { code: "invalid_request", message } })

/** The workspace path of a file URL: the rest of the path, percent-decoded segment by segment, then checked. */
const filePath = (raw: string): Effect.Effect<string, HttpErrors.InvalidRequest> => {
  let path: string
  try {
    path = raw.split("/").map(decodeURIComponent).join("/")
  } catch {
    return Effect.fail(invalid("the file path has malformed percent-encoding"))
  }
  const issue = Sandbox.filePathIssue(path)
  return issue === undefined ? Effect.succeed(path) : Effect.fail(invalid(`invalid path: ${issue}`))
}

/** The upload's file and target path, read from the stream without touching the server's disk. */
const readUpload = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>) =>
  Effect.gen(function*() {
    let path: string | undefined
    let file: { readonly name: string; readonly bytes: Uint8Array } | undefined
    yield* Stream.runForEach(parts, (part) =>
      Effect.gen(function*() {
        if (part._tag === "Field" && part.key === "path") path = part.value
        else if (part._tag === "File" && part.key === "file" && file === undefined) {
          file = { name: part.name, bytes: yield* part.contentEffect }
        } else if (part._tag === "File") yield* Stream.runDrain(part.content)
      }))
    if (file === undefined) return yield* Effect.fail(invalid("file: a multipart part named file is required"))
    const target = path === undefined || path === "" ? file.name.split(/[\\/]/).pop() ?? "" : path
    const issue = Sandbox.filePathIssue(target)
    if (issue !== undefined) return yield* Effect.fail(invalid(`invalid path: ${issue}`))
    return { path: target, bytes: file.bytes }
  }).pipe(
    Effect.catchTag("MultipartError", (error) =>
      Effect.fail(
        error.reason === "FileTooLarge" || error.reason === "BodyTooLarge"
          ? new HttpErrors.PayloadTooLarge({
            error: { code: "invalid_request", message: "the file is larger than the upload limit (50 MiB)" }
          })
          : invalid(`the upload is not a valid multipart body (${error.reason})`)
      )),
    // The multipart parser throws on a malformed header (no or a bad boundary) instead of failing.
    Effect.catchAllDefect(() => Effect.fail(invalid("the upload is not a valid multipart body")))
  )

/** Where a file the sandbox made is downloaded: `GET /v2/sandcastles/{id}/files/{path}`. */
const fileUrl = (id: SandboxId, name: string) =>
  `/v2/sandcastles/${id}/files/${name.split("/").map(encodeURIComponent).join("/")}`

export const layer = HttpApiBuilder.group(SightlineApi, "sandcastles", (handlers) =>
  Effect.gen(function*() {
    const sandboxes = yield* Sandboxes.Sandboxes
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((principal) => sandboxes.list(principal, urlParams)))
      .handle("create", ({ payload }) => withPrincipal((principal) => sandboxes.start(principal, payload)))
      .handle("get", ({ path }) => withPrincipal((principal) => sandboxes.status(principal, path.id)))
      .handle("stop", ({ path }) => withPrincipal((principal) => sandboxes.stop(principal, path.id)))
      .handle("executions", ({ path, urlParams }) =>
        withPrincipal((principal) => sandboxes.executions(principal, path.id, urlParams)))
      .handle("execute", ({ path, payload }) =>
        withPrincipal((principal) =>
          Effect.map(sandboxes.execute(principal, path.id, payload), (executed) => ({
            ...executed,
            files: executed.files.map((file) => ({ ...file, url: fileUrl(path.id, file.name) }))
          }))
        ))
      .handle("query", ({ path, payload }) =>
        withPrincipal((principal) =>
          sandboxes.query(principal, path.id, payload)
        ))
      .handle("exec", ({ path, payload }) =>
        withPrincipal((principal) => sandboxes.exec(principal, path.id, payload)))
      .handle("listFiles", ({ path, urlParams }) =>
        withPrincipal((principal) =>
          sandboxes.listFiles(principal, path.id, urlParams)
        ))
      .handle("upload", ({ path, payload }) =>
        Effect.flatMap(readUpload(payload), (upload) =>
          withPrincipal((principal) =>
            sandboxes.writeFile(principal, path.id, upload.path, upload.bytes)
          )))
      .handle("download", ({ path }) =>
        Effect.gen(function*() {
          const file = yield* filePath(path["*"])
          const content = yield* withPrincipal((principal) =>
            sandboxes.readFile(principal, path.id, file)
          )
          return HttpServerResponse.uint8Array(content.bytes, {
            contentType: content.mimeType,
            headers: {
              // Files are the sandbox's code's output: never rendered as the API's origin.
              "content-security-policy": "sandbox",
              "x-content-type-options": "nosniff",
              "cache-control": "private, no-store",
              "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(content.name)}`
            }
          })
        }))
      .handle("deleteFile", ({ path }) =>
        Effect.flatMap(
          filePath(path["*"]),
          (file) => withPrincipal((principal) => sandboxes.deleteFile(principal, path.id, file))
        ))
      .handle("libraryDiff", ({ path }) => withPrincipal((principal) => sandboxes.libraryDiff(principal, path.id)))
      .handle("libraryChange", ({ path, payload }) =>
        withPrincipal((principal) => sandboxes.fileChange(principal, path.id, payload)))
  })).pipe(only(Authentication, Sandboxes.Sandboxes))

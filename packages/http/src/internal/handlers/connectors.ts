import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as Multipart from "@effect/platform/Multipart"
import * as Connectors from "@sightline/core/Connectors"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

// The parts as the platform stored them, with their sizes.
const uploadsOf = (files: ReadonlyArray<Multipart.PersistedFile>) =>
  Effect.flatMap(
    FileSystem.FileSystem,
    (fs) =>
      Effect.forEach(files, (file) =>
        Effect.map(Effect.orDie(fs.stat(file.path)), (info) => ({
          path: file.path,
          fileName: file.name,
          sizeBytes: Number(info.size)
        })))
  )

export const layer = HttpApiBuilder.group(SightlineApi, "connectors", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors.Connectors
    return handlers
      .handle("list", () => withPrincipal((principal) => connectors.list(principal)))
      .handle("create", ({ payload }) =>
        withPrincipal((principal) =>
          "files" in payload
            ? Effect.flatMap(uploadsOf(payload.files), (uploads) =>
              connectors.createFromFiles(principal, {
                uploads,
                name: payload.name,
                access: payload.access
              }))
            : connectors.create(principal, payload)
        ))
      .handle("types", () => withPrincipal((principal) => connectors.types(principal)))
      .handle("test", ({ payload }) => withPrincipal((principal) => connectors.test(principal, payload)))
      .handle("update", ({ path, payload }) =>
        withPrincipal((principal) => connectors.update(principal, path.id, payload)))
      .handle("delete", ({ path }) =>
        withPrincipal((principal) => connectors.delete(principal, path.id)))
      .handle("files", ({ path }) => withPrincipal((principal) => connectors.files(principal, path.id)))
      .handle("addFiles", ({ path, payload }) =>
        withPrincipal((principal) =>
          Effect.flatMap(uploadsOf(payload.files), (uploads) =>
            connectors.addFiles(principal, path.id, uploads))
        ))
      .handle("removeTable", ({ path }) =>
        withPrincipal((principal) =>
          connectors.removeTable(principal, path.id, path.table)
        ))
      .handle("getAccess", ({ path }) =>
        withPrincipal((principal) =>
          connectors.getAccess(principal, path.id)
        ))
      .handle("putAccess", ({ path, payload }) =>
        withPrincipal((principal) => connectors.putAccess(principal, path.id, payload)))
  })).pipe(only(Authentication, Connectors.Connectors))

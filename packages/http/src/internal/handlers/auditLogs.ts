import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as AuditLogs from "@sightline/core/AuditLogs"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "auditLogs", (handlers) =>
  Effect.gen(function*() {
    const auditLogs = yield* AuditLogs.AuditLogs
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((principal) => auditLogs.list(principal, urlParams)))
      .handle("usage", ({ urlParams }) => withPrincipal((principal) => auditLogs.usage(principal, urlParams)))
  })).pipe(only(Authentication, AuditLogs.AuditLogs))

import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as AnswerContext from "@sightline/core/AnswerContext"
import * as Answers from "@sightline/core/Answers"
import type * as Asset from "@sightline/core/Asset"
import * as Chat from "@sightline/core/Chat"
import * as ChatEvent from "@sightline/core/ChatEvent"
import * as Chats from "@sightline/core/Chats"
import * as ChatStreams from "@sightline/core/ChatStreams"
import type * as Clarification from "@sightline/core/Clarification"
import * as Errors from "@sightline/core/Errors"
import * as Models from "@sightline/core/Models"
import * as Reruns from "@sightline/core/Reruns"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { SightlineApi } from "../../Api.js"
import { AssetUrls } from "../../AssetUrls.js"
import { Authentication } from "../../Authentication.js"
import { uploadedFiles } from "../../ChatForm.js"
import * as HttpErrors from "../../HttpErrors.js"
import { trustedJson, withPrincipal } from "../handler.js"
import { only } from "../only.js"
import * as Sse from "../sse.js"

// The run's own events, framed on every answer's path: encoded without checking them again.
const encodeEvent = TrustedSchema.encoder(ChatEvent.ChatEvent)

const listResponse = trustedJson(Chat.ListChatsResponse)
const getResponse = trustedJson(Chat.GetChatResponse)
const cellsResponse = trustedJson(Chat.ChatCellsResponse)

// Followers of one answer are handed the same event objects (one read of the log per process), so
// each event is framed once, however many streams carry it.
const framed = new WeakMap<ChatEvent.Sequenced, Uint8Array>()
const frame = (sequenced: ChatEvent.Sequenced) => {
  let bytes = framed.get(sequenced)
  if (bytes === undefined) {
    bytes = Sse.event(sequenced.id, encodeEvent(sequenced.event))
    framed.set(sequenced, bytes)
  }
  return bytes
}

// A batch the tail hands every caught-up follower is the same array: framed once too.
const framedBatches = new WeakMap<ReadonlyArray<ChatEvent.Sequenced>, Uint8Array>()
const frameBatch = (events: ReadonlyArray<ChatEvent.Sequenced>) => {
  if (events.length === 1) return frame(events[0]!)
  let bytes = framedBatches.get(events)
  if (bytes === undefined) {
    bytes = Buffer.concat(events.map(frame))
    framedBatches.set(events, bytes)
  }
  return bytes
}

// The asker's stream: the run's events pushed on as the run publishes them (no fiber: a stream's
// hops would add to every event's latency), and a comment after 15 s of silence.
const askResponse = (handle: Answers.Handle) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const body = Sse.body({ keepAliveTimer: Sse.heartbeatInterval, source: request.source })
    // Detached from the request, as the run is: the body's end (or its client leaving) stops it.
    const stop = handle.listen((events) => {
      body.send(frameBatch(events))
      if (ChatEvent.isDone(events[events.length - 1]!.event)) body.end()
    })
    body.onClose(stop)
    return Sse.response(body)
  })

// A server may hold thousands of followers of one run, so a follower has no fiber at all: its run's
// shared tail pushes into its body, and its keep-alive rides on the tail's idle ticks.
const followResponse = (subscription: ChatStreams.Subscription) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = Sse.body({ source: request.source })
    // What the follower is handed while it joins (its backlog, often hundreds of batches) goes out
    // as one write when the join is over, not as a write per batch.
    let joining: Array<Uint8Array> | undefined = []
    let endedWhileJoining = false
    const scope = yield* Scope.make()
    // The response's end (after `done`, or a client gone) is the follower leaving its tail.
    body.onClose(() => Effect.runFork(Scope.close(scope, Exit.void)))
    yield* Scope.extend(
      subscription({
        events: (events) => {
          const bytes = frameBatch(events)
          if (joining === undefined) body.send(bytes)
          else joining.push(bytes)
        },
        idle: body.keepAlive,
        end: () => {
          if (joining === undefined) body.end()
          else endedWhileJoining = true
        }
      }),
      scope
    ).pipe(Effect.onInterrupt(() => Scope.close(scope, Exit.void)))
    const backlog = joining
    joining = undefined
    if (backlog.length > 0) body.send(backlog.length === 1 ? backlog[0]! : Buffer.concat(backlog))
    if (endedWhileJoining) body.end()
    return Sse.response(body)
  })

// The files of a multipart question; reading them again can only fail on a broken temporary file.
const withFiles = <A, E, R>(f: (files: ReadonlyArray<AnswerContext.UploadedFile>) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.catchAll(
      uploadedFiles,
      () =>
        Effect.fail(
          new HttpErrors.InvalidRequest({
            error: { code: "invalid_request", message: "files: the uploaded files could not be read" }
          })
        )
    ),
    f
  )

export const layer = HttpApiBuilder.group(SightlineApi, "chats", (handlers) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const answers = yield* Answers.Answers
    const streams = yield* ChatStreams.ChatStreams
    const models = yield* Models.Models
    const reruns = yield* Reruns.Reruns
    const { sign } = yield* AssetUrls
    return handlers
      .handle("create", ({ payload }) =>
        withFiles((files) =>
          withPrincipal((principal) => answers.ask(principal, payload, sign, { files }))
        ).pipe(
          Effect.flatMap((handle) =>
            Stream.runFold(
              handle.events,
              {
                text: "",
                assets: [] as Array<Asset.Asset>,
                clarification: undefined as Clarification.Clarification | undefined,
                done: undefined as ChatEvent.Done | undefined
              },
              (answer, { event }) => {
                if (event.type === "text") answer.text += event.text
                else if (event.type === "asset") answer.assets.push(event.asset)
                else if (event.type === "clarification") {
                  answer.clarification = { question: event.question, choices: event.choices }
                } else if (event.type === "done") answer.done = event
                return answer
              }
            ).pipe(Effect.flatMap(({ assets, clarification, done, text }) => {
              if (done?.status === "completed") {
                return Effect.succeed({
                  id: handle.metadata.id,
                  created_at: handle.metadata.created_at,
                  model: handle.metadata.model,
                  response: text,
                  chat_id: handle.metadata.chat_id,
                  assets,
                  ...(clarification === undefined ? {} : { clarification })
                })
              }
              const error = done?.error ?? Errors.defaultMessage.execution_failed
              return Effect.fail(HttpErrors.fromApiError(
                error === ChatEvent.cancelledMessage
                  ? new Errors.Cancelled({ message: error })
                  : new Errors.ExecutionFailed({ message: error })
              ))
            }))
          )
        ))
      .handle("stream", ({ payload }) =>
        withFiles((files) =>
          withPrincipal((principal) =>
            answers.ask(principal, payload, sign, { files })
          )
        ).pipe(
          Effect.flatMap(askResponse)
        ))
      .handle("follow", ({ headers, path, urlParams }) =>
        withPrincipal((principal) =>
          streams.subscribe(principal, path.id, headers["last-event-id"] ?? urlParams.last_event_id)
        ).pipe(Effect.flatMap(followResponse)))
      .handle("cancel", ({ path }) =>
        withPrincipal((principal) =>
          answers.cancel(principal, path.id)
        ))
      .handle("list", ({ urlParams }) =>
        withPrincipal((principal) => Effect.map(chats.list(principal, urlParams), listResponse)))
      .handle("get", ({ path }) =>
        withPrincipal((principal) =>
          Effect.map(chats.get(principal, path.id, sign), getResponse)
        ))
      .handle("cells", ({ path, urlParams }) =>
        withPrincipal((principal) =>
          Effect.map(chats.cells(principal, path.id, urlParams, sign), cellsResponse)
        ))
      .handle("cell", ({ path }) =>
        withPrincipal((principal) =>
          chats.cell(principal, path.id, path.cellId, sign)
        ))
      .handle(
        "rerun",
        ({ path }) => withPrincipal((principal) => reruns.rerun(principal, path.id, path.messageId, sign))
      )
      .handle("models", () => withPrincipal((principal) => models.list(principal)))
  })).pipe(
    only(Authentication, Chats.Chats, Answers.Answers, AssetUrls, ChatStreams.ChatStreams, Models.Models, Reruns.Reruns)
  )

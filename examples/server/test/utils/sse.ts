/**
 * A real SSE client for tests: reads a `text/event-stream` response with `eventsource-parser`.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"

/** An event as the client saw it: its id and its JSON data. */
export interface Received {
  readonly id: string | undefined
  readonly data: any
}

/** Reads events until the stream ends, or until `until` says stop (the connection is then dropped). */
export const readEvents = async (
  response: Response,
  until?: (event: Received, all: ReadonlyArray<Received>) => boolean
): Promise<Array<Received>> => {
  const events: Array<Received> = []
  let stop = false
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      if (stop) return
      const event = { id: message.id, data: JSON.parse(message.data) }
      events.push(event)
      if (until?.(event, events) === true) stop = true
    }
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  while (!stop) {
    const { done, value } = await reader.read()
    if (done) break
    parser.feed(decoder.decode(value, { stream: true }))
  }
  if (stop) await reader.cancel()
  return events
}

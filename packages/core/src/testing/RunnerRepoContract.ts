/**
 * The contract every `RunnerRepo` implementation satisfies.
 *
 * Runners are not of an organization: every test registers runners of its own, seen at times of its
 * own in the far future, so that the runners other tests left in a shared database are older than
 * the moment it asks about.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { RunnerRepo } from "../RunnerRepo.js"
import * as Fixtures from "./Fixtures.js"

// A moment after every other test's, and after this one's earlier moments.
let year = 2100
const future = () => {
  year += 1
  return DateTime.unsafeMake(`${year}-06-01T10:00:00.123Z`)
}

const runner = (draining = false) => ({
  id: `runner-${Fixtures.uuid()}`,
  url: `http://10.0.0.${Math.floor(Math.random() * 200) + 1}:8790`,
  draining
})

/**
 * Registers the `RunnerRepo` contract suite.
 *
 * @since 0.1.0
 * @category utils
 */
export const runnerRepoContract = (name: string, layer: Layer.Layer<RunnerRepo, unknown>): void => {
  describe(`RunnerRepo contract: ${name}`, () => {
    it.effect("a heartbeat registers a runner, and the next one updates it in place", () =>
      Effect.gen(function*() {
        const repo = yield* RunnerRepo
        const first = runner()
        const seen = future()
        yield* repo.heartbeat(first, seen)
        const stored = Option.getOrThrow(yield* repo.get(first.id))
        expect({ ...stored, lastSeenAt: DateTime.formatIso(stored.lastSeenAt) }).toEqual({
          ...first,
          lastSeenAt: DateTime.formatIso(seen)
        })
        const later = DateTime.add(seen, { seconds: 10 })
        yield* repo.heartbeat({ ...first, url: "http://10.0.0.250:8790", draining: true }, later)
        const again = Option.getOrThrow(yield* repo.get(first.id))
        expect(again.url).toBe("http://10.0.0.250:8790")
        expect(again.draining).toBe(true)
        expect(DateTime.formatIso(again.lastSeenAt)).toBe(DateTime.formatIso(later))
        expect(yield* repo.get(`runner-${Fixtures.uuid()}`)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("leastLoaded takes only a runner seen since the moment that does not drain", () =>
      Effect.gen(function*() {
        const repo = yield* RunnerRepo
        const since = future()
        const stale = runner()
        const draining = runner(true)
        const live = runner()
        yield* repo.heartbeat(stale, DateTime.subtract(since, { seconds: 1 }))
        yield* repo.heartbeat(draining, DateTime.add(since, { seconds: 5 }))
        yield* repo.heartbeat(live, since)
        expect(Option.map(yield* repo.leastLoaded(since), (r) => r.id)).toEqual(Option.some(live.id))
        // Draining, then gone: nothing is left to take.
        yield* repo.heartbeat({ ...live, draining: true }, since)
        expect(yield* repo.leastLoaded(since)).toEqual(Option.none())
        yield* repo.heartbeat({ ...draining, draining: false }, DateTime.add(since, { seconds: 6 }))
        expect(Option.map(yield* repo.leastLoaded(since), (r) => r.id)).toEqual(Option.some(draining.id))
      }).pipe(Effect.provide(layer)))

    it.effect("remove forgets a runner, and removing an unknown one is no error", () =>
      Effect.gen(function*() {
        const repo = yield* RunnerRepo
        const since = future()
        const gone = runner()
        yield* repo.heartbeat(gone, since)
        yield* repo.remove(gone.id)
        expect(yield* repo.get(gone.id)).toEqual(Option.none())
        expect(yield* repo.leastLoaded(since)).toEqual(Option.none())
        yield* repo.remove(gone.id)
      }).pipe(Effect.provide(layer)))
  })
}

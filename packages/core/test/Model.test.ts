import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ModelNumber, OrganizationId } from "../src/Ids.js"
import * as Model from "../src/Model.js"

const entry = (number: number, id: string, supportsFastMode = false) =>
  new Model.CatalogueEntry({
    number: ModelNumber.make(number),
    id,
    provider: "openai",
    supports_fast_mode: supportsFastMode
  })

const orgId = OrganizationId.make("00000000-0000-4000-8000-000000000001")

describe("Model catalogue", () => {
  it("a valid catalogue names its default", () => {
    const catalogue = Either.getOrThrow(Model.makeCatalogue([entry(1, "a"), entry(2, "b")], "b"))
    expect(catalogue.defaultModel.id).toBe("b")
    expect(Option.map(Model.findById(catalogue, "a"), (e) => e.number)).toEqual(Option.some(1))
    expect(Option.map(Model.findByNumber(catalogue, ModelNumber.make(2)), (e) => e.id)).toEqual(Option.some("b"))
    expect(Option.isNone(Model.findById(catalogue, "c"))).toBe(true)
  })

  it("rejects an empty catalogue, duplicates and a default it does not list", () => {
    expect(Model.makeCatalogue([], "a")).toEqual(Either.left("the model catalogue is empty"))
    expect(Model.makeCatalogue([entry(1, "a"), entry(1, "b")], "a")).toEqual(
      Either.left("model number 1 appears twice in the catalogue")
    )
    expect(Model.makeCatalogue([entry(1, "a"), entry(2, "a")], "a")).toEqual(
      Either.left("model id a appears twice in the catalogue")
    )
    expect(Model.makeCatalogue([entry(1, "a")], "z")).toEqual(
      Either.left("the default model z is not in the catalogue")
    )
  })

  it("the models response flags the default once, in catalogue order", () => {
    const entries = [entry(1, "a"), entry(2, "b", true), entry(3, "c")]
    const response = Schema.encodeSync(Model.ModelsResponse)(Model.toModelsResponse(entries, entries[1]!))
    expect(response).toEqual({
      models: [
        { id: "a", number: 1, provider: "openai", supports_fast_mode: false, default: false },
        { id: "b", number: 2, provider: "openai", supports_fast_mode: true, default: true },
        { id: "c", number: 3, provider: "openai", supports_fast_mode: false, default: false }
      ]
    })
  })

  it.effect("layerStatic serves the same catalogue to every organization", () =>
    Effect.gen(function*() {
      const service = yield* Model.ModelCatalogue
      const catalogue = yield* service.catalogue(orgId)
      expect(catalogue.entries.map((e) => e.id)).toEqual(["offline", "offline-fast"])
      expect(catalogue.defaultModel.id).toBe("offline")
    }).pipe(Effect.provide(Model.layerTest)))

  it.effect("layerStatic with an invalid catalogue dies with the reason", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(Model.ModelCatalogue, Model.layerStatic([entry(1, "a")], "missing"))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isDie(exit.cause)).toBe(true)
        expect(Cause.pretty(exit.cause)).toContain("the default model missing is not in the catalogue")
      }
    }))
})

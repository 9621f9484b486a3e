/**
 * Language models: the catalogue of models the configured providers offer, and the wire shapes of
 * GET /v2/models.
 *
 * Roles refer to catalogue entries by an integer (`default_model_id`, `allowed_model_ids`), chats by
 * their string id; a catalogue entry carries both.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { OrganizationId } from "./Ids.js"
import { ModelNumber } from "./Ids.js"

/**
 * A model id as chats and GET /v2/models carry it (for example `gpt-4.1` or `claude-sonnet-4`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelId = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(200))

/**
 * A model as listed by GET /v2/models.
 *
 * @since 0.1.0
 * @category models
 */
export class Model extends Schema.Class<Model>("@sightline/core/Model")({
  id: Schema.String,
  /** The integer id of the model: what roles' `default_model_id` and `allowed_model_ids` take. */
  number: ModelNumber,
  provider: Schema.String,
  supports_fast_mode: Schema.Boolean,
  /** Whether this is the model a chat gets when it names none. */
  default: Schema.Boolean
}) {}

/**
 * The response of GET /v2/models.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelsResponse = Schema.Struct({ models: Schema.Array(Model) })
export type ModelsResponse = typeof ModelsResponse.Type

/**
 * A model of the catalogue. `provider` names the adapter that serves it (openai, anthropic, ...).
 *
 * @since 0.1.0
 * @category models
 */
export class CatalogueEntry extends Schema.Class<CatalogueEntry>("@sightline/core/CatalogueEntry")({
  number: ModelNumber,
  id: ModelId,
  provider: Schema.NonEmptyTrimmedString,
  supports_fast_mode: Schema.Boolean,
  /** The provider's own name of the model, when it differs from `id`. */
  model: Schema.optional(Schema.NonEmptyTrimmedString)
}) {}

/**
 * The name the provider knows the model by.
 *
 * @since 0.1.0
 * @category utils
 */
export const providerModel = (entry: CatalogueEntry): string => entry.model ?? entry.id

/**
 * The models of an organization and the one its chats get by default.
 *
 * @since 0.1.0
 * @category models
 */
export interface Catalogue {
  readonly entries: Arr.NonEmptyReadonlyArray<CatalogueEntry>
  readonly defaultModel: CatalogueEntry
}

/**
 * Checks a configured catalogue: at least one entry, numbers and ids unique, the default listed.
 * The message says what is wrong, for the configuration error it becomes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeCatalogue = (
  entries: ReadonlyArray<CatalogueEntry>,
  defaultId: string
): Either.Either<Catalogue, string> => {
  if (!Arr.isNonEmptyReadonlyArray(entries)) return Either.left("the model catalogue is empty")
  const duplicateNumber = entries.find((e, i) => entries.findIndex((o) => o.number === e.number) !== i)
  if (duplicateNumber !== undefined) {
    return Either.left(`model number ${duplicateNumber.number} appears twice in the catalogue`)
  }
  const duplicateId = entries.find((e, i) => entries.findIndex((o) => o.id === e.id) !== i)
  if (duplicateId !== undefined) return Either.left(`model id ${duplicateId.id} appears twice in the catalogue`)
  return Option.match(Arr.findFirst(entries, (e) => e.id === defaultId), {
    onNone: () => Either.left(`the default model ${defaultId} is not in the catalogue`),
    onSome: (defaultModel) => Either.right({ entries, defaultModel })
  })
}

/**
 * The entry of a model id.
 *
 * @since 0.1.0
 * @category utils
 */
export const findById = (catalogue: Catalogue, id: string): Option.Option<CatalogueEntry> =>
  Arr.findFirst(catalogue.entries, (e) => e.id === id)

/**
 * The entry of a model number (as roles store it).
 *
 * @since 0.1.0
 * @category utils
 */
export const findByNumber = (catalogue: Catalogue, number: ModelNumber): Option.Option<CatalogueEntry> =>
  Arr.findFirst(catalogue.entries, (e) => e.number === number)

/**
 * A catalogue entry as GET /v2/models lists it.
 *
 * @since 0.1.0
 * @category utils
 */
export const toModel = (entry: CatalogueEntry, isDefault: boolean): Model =>
  new Model({
    id: entry.id,
    number: entry.number,
    provider: entry.provider,
    supports_fast_mode: entry.supports_fast_mode,
    default: isDefault
  }, true)

/**
 * The response of GET /v2/models: the entries the caller may use (in catalogue order), flagging the
 * caller's default (the organization's, unless a role sets another).
 *
 * @since 0.1.0
 * @category utils
 */
export const toModelsResponse = (
  entries: ReadonlyArray<CatalogueEntry>,
  defaultModel: CatalogueEntry
): ModelsResponse => ({ models: entries.map((e) => toModel(e, e.number === defaultModel.number)) })

/**
 * The models the configured providers offer, per organization.
 *
 * @since 0.1.0
 * @category services
 */
export class ModelCatalogue extends Context.Tag("@sightline/core/Model/ModelCatalogue")<
  ModelCatalogue,
  ModelCatalogue.Service
>() {}

export declare namespace ModelCatalogue {
  /** Read access to the catalogue. */
  export interface Service {
    /** The organization's catalogue with its default model. */
    readonly catalogue: (organizationId: OrganizationId) => Effect.Effect<Catalogue>
  }
}

/**
 * The same catalogue for every organization, fixed at startup (the models of the configured
 * providers). An invalid catalogue is a configuration error: building the layer dies with why.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStatic = (
  entries: ReadonlyArray<CatalogueEntry>,
  defaultId: string
): Layer.Layer<ModelCatalogue> =>
  Layer.effect(
    ModelCatalogue,
    Either.match(makeCatalogue(entries, defaultId), {
      onLeft: (reason) => Effect.dieMessage(`invalid model catalogue: ${reason}`),
      onRight: (catalogue) => Effect.succeed({ catalogue: () => Effect.succeed(catalogue) })
    })
  )

/**
 * The catalogue of tests: the offline model (the default) and a second, fast one.
 *
 * @since 0.1.0
 * @category constants
 */
export const testEntries: Arr.NonEmptyReadonlyArray<CatalogueEntry> = [
  new CatalogueEntry({ number: ModelNumber.make(1), id: "offline", provider: "offline", supports_fast_mode: false }),
  new CatalogueEntry({ number: ModelNumber.make(2), id: "offline-fast", provider: "offline", supports_fast_mode: true })
]

/**
 * A static catalogue of `testEntries` with `offline` as the default.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest: Layer.Layer<ModelCatalogue> = layerStatic(testEntries, "offline")

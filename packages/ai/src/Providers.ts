/**
 * The configured model providers as one `LanguageModel` (routing each request by its catalogue
 * provider) and the model catalogue they offer.
 *
 * Configuration (environment, read by `fromEnv`):
 * - `OPENAI_API_KEY` (and `OPENAI_BASE_URL`): OpenAI's Responses API;
 * - `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`): Anthropic's Messages API;
 * - `SIGHTLINE_OPENAI_COMPATIBLE_URL` (and `SIGHTLINE_OPENAI_COMPATIBLE_API_KEY`): any Chat
 *   Completions server;
 * - `SIGHTLINE_MODELS`: the catalogue as JSON (`CatalogueEntry` below); without it each configured
 *   provider contributes its models (`defaultModels`, or what the compatible server lists);
 * - `SIGHTLINE_OFFLINE_MODEL=false` turns the offline model off (it is listed otherwise).
 *
 * @since 0.1.0
 */
import { ModelNumber } from "@sightline/core/Ids"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as Model from "@sightline/core/Model"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Anthropic from "./Anthropic.js"
import * as ChatCompletions from "./ChatCompletions.js"
import * as Offline from "./Offline.js"
import * as OpenAiResponses from "./OpenAiResponses.js"

/**
 * The providers Sightline speaks.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Provider = Schema.Literal("offline", "openai", "anthropic", "openai-compatible")
export type Provider = typeof Provider.Type

/**
 * One entry of `SIGHTLINE_MODELS`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CatalogueEntry = Schema.Struct({
  /** The string id chats use (`model` of a chat request). */
  id: Model.ModelId,
  /** The integer id roles use (`default_model_id`, `allowed_model_ids`). */
  number: ModelNumber,
  provider: Provider,
  /** The provider's model name; `id` when omitted. */
  model: Schema.optional(Schema.NonEmptyTrimmedString),
  /** The organization's default model (at most one entry; the first entry otherwise). */
  default: Schema.optional(Schema.Boolean),
  supports_fast_mode: Schema.optional(Schema.Boolean)
})
export type CatalogueEntry = typeof CatalogueEntry.Type

/**
 * `SIGHTLINE_MODELS`: a JSON array of entries.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Catalogue = Schema.parseJson(Schema.Array(CatalogueEntry))

/**
 * What is configured.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly openAiApiKey?: Redacted.Redacted | undefined
  readonly openAiBaseUrl?: string | undefined
  readonly anthropicApiKey?: Redacted.Redacted | undefined
  readonly anthropicBaseUrl?: string | undefined
  readonly compatibleUrl?: string | undefined
  readonly compatibleApiKey?: Redacted.Redacted | undefined
  /** The catalogue as JSON text (`SIGHTLINE_MODELS`). */
  readonly models?: string | undefined
  /** Whether the offline model is offered (default true). */
  readonly offline?: boolean | undefined
}

/**
 * The options from the environment.
 *
 * @since 0.1.0
 * @category constants
 */
export const fromEnv: Config.Config<Options> = Config.all({
  openAiApiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
  openAiBaseUrl: Config.option(Config.string("OPENAI_BASE_URL")),
  anthropicApiKey: Config.option(Config.redacted("ANTHROPIC_API_KEY")),
  anthropicBaseUrl: Config.option(Config.string("ANTHROPIC_BASE_URL")),
  compatibleUrl: Config.option(Config.string("SIGHTLINE_OPENAI_COMPATIBLE_URL")),
  compatibleApiKey: Config.option(Config.redacted("SIGHTLINE_OPENAI_COMPATIBLE_API_KEY")),
  models: Config.option(Config.string("SIGHTLINE_MODELS")),
  offline: Config.withDefault(Config.boolean("SIGHTLINE_OFFLINE_MODEL"), true)
}).pipe(Config.map((c) => ({
  openAiApiKey: Option.getOrUndefined(c.openAiApiKey),
  openAiBaseUrl: Option.getOrUndefined(c.openAiBaseUrl),
  anthropicApiKey: Option.getOrUndefined(c.anthropicApiKey),
  anthropicBaseUrl: Option.getOrUndefined(c.anthropicBaseUrl),
  compatibleUrl: Option.getOrUndefined(c.compatibleUrl),
  compatibleApiKey: Option.getOrUndefined(c.compatibleApiKey),
  models: Option.getOrUndefined(c.models),
  offline: c.offline
})))

/**
 * The models a provider contributes when no catalogue is configured (numbers are stable).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultModels: Readonly<Record<"openai" | "anthropic", ReadonlyArray<CatalogueEntry>>> = {
  openai: [
    { id: "gpt-4.1", number: ModelNumber.make(10), provider: "openai" },
    { id: "gpt-4.1-mini", number: ModelNumber.make(11), provider: "openai", supports_fast_mode: true }
  ],
  anthropic: [
    { id: "claude-sonnet-4-5", number: ModelNumber.make(20), provider: "anthropic" },
    { id: "claude-haiku-4-5", number: ModelNumber.make(21), provider: "anthropic", supports_fast_mode: true }
  ]
}

/**
 * The offline model's entry.
 *
 * @since 0.1.0
 * @category constants
 */
export const offlineEntry: CatalogueEntry = { id: "offline", number: ModelNumber.make(1), provider: "offline" }

/**
 * The first number of the models a compatible server lists (in its order).
 *
 * @since 0.1.0
 * @category constants
 */
export const compatibleFirstNumber = 100

/**
 * A configuration that cannot work, and why.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderConfigError extends Schema.TaggedError<ProviderConfigError>()("ProviderConfigError", {
  message: Schema.String
}) {}

const configured = (options: Options): ReadonlySet<Provider> =>
  new Set<Provider>([
    ...(options.offline === false ? [] : ["offline" as const]),
    ...(options.openAiApiKey === undefined ? [] : ["openai" as const]),
    ...(options.anthropicApiKey === undefined ? [] : ["anthropic" as const]),
    ...(options.compatibleUrl === undefined ? [] : ["openai-compatible" as const])
  ])

/**
 * The catalogue entries and the default id, from the options (a compatible server is asked for its models).
 *
 * @since 0.1.0
 * @category utils
 */
export const entries = (
  options: Options
): Effect.Effect<
  { readonly entries: ReadonlyArray<CatalogueEntry>; readonly defaultId: string },
  ProviderConfigError
> =>
  Effect.gen(function*() {
    const available = configured(options)
    let list: Array<CatalogueEntry>
    if (options.models !== undefined) {
      list = [
        ...yield* Schema.decodeUnknown(Catalogue)(options.models).pipe(
          Effect.mapError((e) =>
            new ProviderConfigError({ message: `SIGHTLINE_MODELS: ${ParseResult.TreeFormatter.formatErrorSync(e)}` })
          )
        )
      ]
      const missing = list.find((entry) => !available.has(entry.provider))
      if (missing !== undefined) {
        return yield* new ProviderConfigError({
          message:
            `SIGHTLINE_MODELS: model ${missing.id} needs the ${missing.provider} provider, which is not configured`
        })
      }
    } else {
      list = []
      if (available.has("openai")) list.push(...defaultModels.openai)
      if (available.has("anthropic")) list.push(...defaultModels.anthropic)
      if (options.compatibleUrl !== undefined) {
        const listed = yield* ChatCompletions.listModels({
          baseUrl: options.compatibleUrl,
          apiKey: options.compatibleApiKey
        }).pipe(
          Effect.mapError((e) => new ProviderConfigError({ message: `SIGHTLINE_OPENAI_COMPATIBLE_URL: ${e.message}` }))
        )
        listed.forEach((id, i) =>
          list.push({ id, number: ModelNumber.make(compatibleFirstNumber + i), provider: "openai-compatible" })
        )
      }
    }
    if (available.has("offline") && !list.some((entry) => entry.provider === "offline")) {
      const number = list.some((entry) => entry.number === offlineEntry.number)
        ? ModelNumber.make(Math.max(...list.map((entry) => entry.number)) + 1)
        : offlineEntry.number
      list.push({ ...offlineEntry, number })
    }
    if (list.length === 0) {
      return yield* new ProviderConfigError({
        message: "no model is available: configure a provider or keep the offline model"
      })
    }
    const flagged = list.filter((entry) => entry.default === true)
    if (flagged.length > 1) {
      return yield* new ProviderConfigError({
        message: `SIGHTLINE_MODELS: ${flagged.length} models are marked default`
      })
    }
    // A configured provider answers better than the offline model, so it is the default when present.
    const defaultId = flagged[0]?.id ?? (list.find((entry) => entry.provider !== "offline") ?? list[0]!).id
    return { entries: list, defaultId }
  })

/**
 * One `LanguageModel` over the configured providers, routing on `request.provider`.
 *
 * @since 0.1.0
 * @category utils
 */
export const router = (options: Options): LanguageModel.LanguageModel.Service => {
  const models: Partial<Record<Provider, LanguageModel.LanguageModel.Service>> = {
    ...(options.offline === false ? {} : { offline: Offline.make }),
    ...(options.openAiApiKey === undefined
      ? {}
      : { openai: OpenAiResponses.make({ apiKey: options.openAiApiKey, baseUrl: options.openAiBaseUrl }) }),
    ...(options.anthropicApiKey === undefined
      ? {}
      : { anthropic: Anthropic.make({ apiKey: options.anthropicApiKey, baseUrl: options.anthropicBaseUrl }) }),
    ...(options.compatibleUrl === undefined
      ? {}
      : {
        "openai-compatible": ChatCompletions.make({ baseUrl: options.compatibleUrl, apiKey: options.compatibleApiKey })
      })
  }
  return LanguageModel.LanguageModel.of({
    generate: (request) => {
      const model = models[(request.provider ?? "offline") as Provider]
      return model === undefined
        ? Stream.fail(
          new LanguageModel.LanguageModelError({
            reason: "invalid_request",
            message: `the ${request.provider} provider is not configured on this server`
          })
        )
        : model.generate(request)
    }
  })
}

/**
 * The catalogue and the router over the options; a configuration that cannot work fails the layer with why.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<LanguageModel.LanguageModel | Model.ModelCatalogue, ProviderConfigError> =>
  Layer.unwrapEffect(Effect.map(entries(options), ({ defaultId, entries }) =>
    Layer.merge(
      Layer.succeed(LanguageModel.LanguageModel, router(options)),
      Model.layerStatic(
        entries.map((entry) =>
          new Model.CatalogueEntry({
            number: entry.number,
            id: entry.id,
            provider: entry.provider,
            supports_fast_mode: entry.supports_fast_mode ?? false,
            ...(entry.model === undefined ? {} : { model: entry.model })
          })
        ),
        defaultId
      )
    )))

/**
 * `layer` over the environment's configuration.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromEnv = Layer.unwrapEffect(Effect.map(fromEnv, layer))

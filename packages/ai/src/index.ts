/**
 * @sightline/ai: language-model adapters for Sightline (core's `LanguageModel`): OpenAI's Responses
 * API, Anthropic's Messages API, any OpenAI-compatible Chat Completions server, and the offline model;
 * `Providers` routes between the configured ones and builds the model catalogue.
 *
 * @since 0.1.0
 */
export * as Anthropic from "./Anthropic.js"
export * as ChatCompletions from "./ChatCompletions.js"
export * as Offline from "./Offline.js"
export * as OpenAiResponses from "./OpenAiResponses.js"
export * as Providers from "./Providers.js"

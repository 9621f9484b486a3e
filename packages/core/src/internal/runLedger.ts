/**
 * What a run gathers as it goes, for its answer's provenance and for its usage entry in the audit
 * log: what it read (set once its context is gathered), then each generation and each tool call.
 * One per run, written only by the run's own fiber; read at the run's end, whatever the end was, so
 * that a failed run's tokens are still counted.
 *
 * @internal
 */
import type * as AuditLog from "../AuditLog.js"
import type * as LanguageModel from "../LanguageModel.js"
import type * as Provenance from "../Provenance.js"

/** What the run read: its model, the library commit, the semantic models and the caller's audience. */
export interface Basis {
  readonly model: { readonly id: string; readonly provider: string; readonly providerModel: string }
  readonly libraryCommit: string | undefined
  readonly semanticModels: ReadonlyArray<Provenance.SemanticModelUsed>
  /** A fingerprint of the caller's client attributes, never the attributes; none without any. */
  readonly clientAttributesHash: string | undefined
}

/** One generation: its tokens (none when the provider did not say) and its time. */
export interface Generation {
  readonly usage?: LanguageModel.Usage | undefined
  readonly millis: number
}

/** The ledger of one run. */
export interface Ledger {
  /** None until the run's context is gathered. */
  basis: Basis | undefined
  readonly generations: Array<Generation>
  readonly toolCalls: Array<Provenance.ToolCall>
  /** Each investigation's plan, as last announced. */
  readonly plans: Array<Provenance.Plan>
}

/** An empty ledger. */
export const make = (): Ledger => ({ basis: undefined, generations: [], toolCalls: [], plans: [] })

/**
 * Keeps an announced plan: one that goes on from the last (its steps, then deeper ones) replaces
 * it; another investigation's is added.
 */
export const planned = (ledger: Ledger, plan: Provenance.Plan): void => {
  const last = ledger.plans.at(-1)
  const continues = last !== undefined && last.title === plan.title &&
    last.steps.every((step, i) => plan.steps[i]?.id === step.id)
  if (continues) ledger.plans[ledger.plans.length - 1] = plan
  else ledger.plans.push(plan)
}

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

/** The provenance of a run's answer; none before the run chose its model. */
export const provenance = (ledger: Ledger): Provenance.Provenance | undefined => {
  const basis = ledger.basis
  if (basis === undefined) return undefined
  const reported = ledger.generations.flatMap((g) => g.usage === undefined ? [] : [g.usage])
  return {
    model: basis.model.id,
    provider: basis.model.provider,
    provider_model: basis.model.providerModel,
    generations: ledger.generations.length,
    ...(reported.length === 0 ? {} : {
      input_tokens: sum(reported.map((u) => u.inputTokens)),
      output_tokens: sum(reported.map((u) => u.outputTokens))
    }),
    model_latency_ms: Math.round(sum(ledger.generations.map((g) => g.millis))),
    tool_calls: ledger.toolCalls,
    ...(basis.libraryCommit === undefined ? {} : { library_commit: basis.libraryCommit }),
    semantic_models: basis.semanticModels,
    ...(basis.clientAttributesHash === undefined ? {} : { client_attributes_hash: basis.clientAttributesHash }),
    ...(ledger.plans.length === 0 ? {} : { plans: ledger.plans.map(({ steps, title }) => ({ title, steps })) })
  }
}

/**
 * The details of the run's `model.usage` audit entry: each generation's tokens and time, so usage
 * can be summed per member, key and model (`GET /v2/usage`). None when the run never called its model.
 */
export const usage = (
  ledger: Ledger,
  asked: { readonly source: string; readonly apiKeyId: string | undefined }
): AuditLog.Details | undefined => {
  const made = provenance(ledger)
  if (made === undefined || ledger.generations.length === 0) return undefined
  return {
    model: made.model,
    provider: made.provider,
    source: asked.source,
    ...(asked.apiKeyId === undefined ? {} : { api_key_id: asked.apiKeyId }),
    input: made.input_tokens ?? 0,
    output: made.output_tokens ?? 0,
    calls: ledger.generations.map((g) => ({
      ms: Math.round(g.millis),
      ...(g.usage === undefined ? {} : { input: g.usage.inputTokens, output: g.usage.outputTokens })
    }))
  }
}

/**
 * A clarification: the answer a run gives when the question could mean several things and it cannot
 * tell which. It is a short question and up to five choices, each a complete question the run could
 * answer. The asker picks one (`POST /v2/chats` with `chat_id` and `choice`) or writes their own;
 * the run never picks on their behalf.
 *
 * The model asks with the `ask_clarification` tool (`AnswerTools`), offered only to runs a person
 * asked (a playbook or an agent has no one to answer). The `clarification` event carries it on the
 * stream, and the answer's message keeps it (`GET /v2/chats/{id}`).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The most choices a clarification offers.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxChoices = 5

const text = (what: string, max: number) =>
  Schema.String.pipe(
    Schema.filter((value) => value.trim().length > 0 || `${what} must not be empty`),
    Schema.maxLength(max, { message: () => `${what} is at most ${max} characters` })
  )

/**
 * A choice as the model offers it: what the button says, and the complete question it stands for.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChoiceInput = Schema.Struct({
  label: text("a choice's label", 200),
  question: text("a choice's question", 2000)
})
export type ChoiceInput = typeof ChoiceInput.Type

/**
 * The arguments of `ask_clarification`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ClarificationInput = Schema.Struct({
  question: text("the question", 500),
  choices: Schema.Array(ChoiceInput).pipe(
    Schema.minItems(2, { message: () => "offer at least two choices" }),
    Schema.maxItems(maxChoices, { message: () => `offer at most ${maxChoices} choices` })
  )
})
export type ClarificationInput = typeof ClarificationInput.Type

/**
 * A choice of a clarification, with the id the asker answers with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Choice = Schema.Struct({ id: Schema.String, ...ChoiceInput.fields })
export type Choice = typeof Choice.Type

/**
 * A clarification: its question and its choices.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Clarification = Schema.Struct({
  question: Schema.String,
  choices: Schema.Array(Choice)
})
export type Clarification = typeof Clarification.Type

/**
 * A clarification from the model's input: its choices numbered `1` to `5` in the order offered, and
 * any choice that repeats an earlier one's question left out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromInput = (input: ClarificationInput): Clarification => ({
  question: input.question.trim(),
  choices: Arr.dedupeWith(input.choices, (a, b) => a.question.trim() === b.question.trim())
    .map((choice, i) => ({ id: String(i + 1), label: choice.label.trim(), question: choice.question.trim() }))
})

/**
 * The choice with `id`, if the clarification offers it.
 *
 * @since 0.1.0
 * @category utils
 */
export const choice = (clarification: Clarification, id: string): Option.Option<Choice> =>
  Arr.findFirst(clarification.choices, (c) => c.id === id)

/**
 * The clarification as the answer's text: the question and its choices, for a reader without buttons
 * (an e-mail, a plain client), who answers by writing one of them.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (clarification: Clarification): string =>
  [
    clarification.question,
    "",
    ...clarification.choices.map((c) => `${c.id}. ${c.label}`)
  ].join("\n")

/**
 * `pnpm bench:answers`: how many questions, typed as people type them, the server's model answers
 * correctly, declines, or answers wrong, against SQL written by hand, over two schemas: the DEMO
 * retail data with its curated semantic model (`questions/demo.ts`), and a SaaS business's plans,
 * accounts, subscriptions and invoices on the local PostgreSQL with no model in the library, read
 * through the model derived from its schema (`questions/saas.ts`).
 *
 * The built server runs as a process of its own on a fresh data directory with its default model
 * (the offline model unless `--model` names another of `SIGHTLINE_MODELS`). Each question is asked
 * over `POST /v2/chats/stream`; the answer's last table is compared
 * with the hand-written query's rows (each row's text cells must appear in one answer row, and its
 * numbers within 0.5%).
 * - answerable questions: correct (the table matches), declined (no table), or wrong (a table that
 *   does not match: a confident wrong number, the failure that matters most);
 * - questions to decline (no hand SQL): declined, or wrong (any table); a decline whose text does not
 *   give the question's true reason (its pattern) is counted in "wrong reason", and listed.
 * Every wrong answer is listed with the reading the answer stated.
 *
 * The floor beside it is the hand-written SQL itself (DEMO's through the same connector runtime):
 * every answerable question has an answer in the data.
 *
 *   pnpm bench:answers [--model offline] [--only demo|saas] [--verbose: the rows of each answer that is not correct]
 *     [--database postgres://postgres@127.0.0.1:5432/postgres: where the SaaS database is made, and dropped after]
 */
import { declined as isDecline, matches, options, withAsking } from "./asking.js"
import * as DemoQuestions from "./questions/demo.js"
import * as SaasQuestions from "./questions/saas.js"
import * as WhyQuestions from "./questions/why.js"

/**
 * What a correct answer to a question of change says, from its first driver's hand figures: the
 * direction of the total change and the value that drove most of it ("fell", "of the fall is in
 * Europe"), or at one time the largest contributor ("Europe gives").
 */
const expectedOf = (
  kind: "sum" | "ratio" | "share",
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): ReadonlyArray<string> => {
  const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v))
  if (kind === "share") {
    const top = [...rows].sort((a, b) => n(b[1]) - n(a[1]))[0]!
    return [`, ${String(top[0])} gives`]
  }
  let parts: Array<{ value: string; change: number }>
  let change: number
  if (kind === "sum") {
    parts = rows.map((row) => ({ value: String(row[0]), change: n(row[2]) - n(row[1]) }))
    change = parts.reduce((t, p) => t + p.change, 0)
  } else {
    // Each value's w1·r1 − w0·r0, its weight the share of the denominator: the parts of a ratio's change.
    const d0 = rows.reduce((t, row) => t + n(row[2]), 0)
    const d1 = rows.reduce((t, row) => t + n(row[4]), 0)
    parts = rows.map((row) => ({ value: String(row[0]), change: n(row[3]) / d1 - n(row[1]) / d0 }))
    change = rows.reduce((t, row) => t + n(row[3]), 0) / d1 - rows.reduce((t, row) => t + n(row[1]), 0) / d0
  }
  const top = [...parts].sort((a, b) => (change < 0 ? a.change - b.change : b.change - a.change))[0]!
  const noun = change > 0 ? "rise" : "fall"
  return [`${change > 0 ? "rose" : "fell"}`, `of the ${noun} is in ${top.value}`]
}

const values = options()
const lastYear = new Date().getUTCFullYear() - 1

await withAsking(
  { port: 18_798, database: values.database },
  async ({ ask, demoConnector, demoRows, saasConnector, saasRows }) => {
    const groups = [
      { name: "DEMO", connectorId: demoConnector, questions: DemoQuestions.questions(lastYear), rows: demoRows },
      { name: "SaaS", connectorId: saasConnector, questions: SaasQuestions.questions(lastYear), rows: saasRows }
    ].filter((group) => values.only === undefined || group.name.toLowerCase() === values.only)

    type Outcome = { correct: number; declined: number; wrong: number; wrongReason: number }
    const empty = (): Outcome => ({ correct: 0, declined: 0, wrong: 0, wrongReason: 0 })
    const table: Array<readonly [string, Outcome]> = []
    const total = empty()
    const wrongs: Array<string> = []
    const wrongReasons: Array<string> = []
    const floors: Array<string> = []
    // Answerable questions whose hand SQL returned no rows: a mistake in the SQL, or in the data.
    const empties: Array<string> = []
    const started = Date.now()
    for (const group of groups) {
      const answerable = empty()
      const unanswerable = empty()
      let floor = 0
      for (const [i, [question, sql, reason]] of group.questions.entries()) {
        const expected = sql === null ? undefined : await group.rows(sql)
        if (expected !== undefined && expected.length > 0) floor += 1
        if (expected !== undefined && expected.length === 0) empties.push(`${group.name} ${i + 1}. ${question}`)
        const answer = await ask(question, { connectorId: group.connectorId }, values.model)
        const { rows, text } = answer
        const verdict = isDecline(answer)
          ? "declined"
          : expected !== undefined && matches(expected, rows!)
          ? "correct"
          : "wrong"
        ;(expected === undefined ? unanswerable : answerable)[verdict] += 1
        console.log(`${group.name} ${String(i + 1).padStart(3)}. ${verdict.padEnd(8)} ${question}`)
        // What the answer said it read: its first paragraph.
        const said = text.split("\n\n")[0]!.slice(0, 300)
        if (verdict === "wrong") wrongs.push(`${group.name} ${i + 1}. ${question}\n    read: ${said}`)
        if (verdict === "declined" && reason !== undefined && !reason.test(text)) {
          unanswerable.wrongReason += 1
          wrongReasons.push(`${group.name} ${i + 1}. ${question} (expected ${reason})\n    said: ${said}`)
        }
        if (values.verbose && verdict !== "correct") {
          console.log(`    said ${said}`)
          console.log(
            `    expected ${JSON.stringify(expected?.slice(0, 6))}\n    answered ${JSON.stringify(rows?.slice(0, 6))}`
          )
        }
      }
      table.push([`answerable (${group.name})`, answerable], [`to decline (${group.name})`, unanswerable])
      for (const o of [answerable, unanswerable]) {
        total.correct += o.correct
        total.declined += o.declined
        total.wrong += o.wrong
        total.wrongReason += o.wrongReason
      }
      const count = group.questions.filter(([, sql]) => sql !== null).length
      floors.push(`${group.name}: the hand SQL answers ${floor} of ${count} answerable questions`)
    }
    // Questions of change: correct when the answer says which way the change went and the value that
    // drove most of it, as the hand figures of its first driver say.
    if (values.only === undefined || values.only === "demo") {
      const answerable = empty()
      const unanswerable = empty()
      for (const [i, why] of WhyQuestions.questions(lastYear).entries()) {
        const answer = await ask(why.question, { connectorId: demoConnector }, values.model)
        const expected = why.kind === "decline" ? undefined : expectedOf(why.kind, await demoRows(why.sql))
        const verdict = expected === undefined
          ? isDecline(answer) ? "declined" : "wrong"
          : isDecline(answer)
          ? "declined"
          : expected.every((words) => answer.text.includes(words))
          ? "correct"
          : "wrong"
        ;(expected === undefined ? unanswerable : answerable)[verdict] += 1
        console.log(`why ${String(i + 1).padStart(3)}. ${verdict.padEnd(8)} ${why.question}`)
        const said = answer.text.split("\n\n").slice(0, 2).join(" ").slice(0, 400)
        if (verdict === "wrong") {
          wrongs.push(`why ${i + 1}. ${why.question} (expected ${expected?.join("; ")})\n    read: ${said}`)
        }
        if (verdict === "declined" && why.kind === "decline" && !why.reason.test(answer.text)) {
          unanswerable.wrongReason += 1
          wrongReasons.push(`why ${i + 1}. ${why.question} (expected ${why.reason})\n    said: ${said}`)
        }
        if (values.verbose && verdict !== "correct") {
          console.log(`    said ${said}\n    expected ${expected?.join("; ")}`)
        }
      }
      table.push(["why, what drove, where from (DEMO)", answerable], ["why, to decline (DEMO)", unanswerable])
      for (const o of [answerable, unanswerable]) {
        total.correct += o.correct
        total.declined += o.declined
        total.wrong += o.wrong
        total.wrongReason += o.wrongReason
      }
    }
    console.log("")
    console.log("| group | questions | correct | declined | of which for another reason | wrong |")
    console.log("|---|---:|---:|---:|---:|---:|")
    for (const [name, o] of [...table, ["all", total] as const]) {
      console.log(
        `| ${name} | ${
          o.correct + o.declined + o.wrong
        } | ${o.correct} | ${o.declined} | ${o.wrongReason} | ${o.wrong} |`
      )
    }
    console.log(`\nfloor: ${floors.join("; ")}`)
    if (empties.length > 0) console.log(`hand SQL with no rows: ${empties.join("; ")}`)
    console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s to ask them all)`)
    if (wrongs.length > 0) console.log(`\nWrong answers, with what they read:\n${wrongs.join("\n")}`)
    if (wrongReasons.length > 0) console.log(`\nDeclines for another reason:\n${wrongReasons.join("\n")}`)
  }
)

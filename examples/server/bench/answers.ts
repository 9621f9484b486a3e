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

/**
 * `pnpm bench:conversations`: how the server's model holds a conversation, against SQL written by
 * hand for what each turn means in its conversation (`questions/conversations.ts`), over the DEMO
 * data and the SaaS schema of `pnpm bench:answers`. The first turn names its connector; every later
 * turn is asked with the chat's id alone, as a person replies.
 *
 * Each turn is correct (its last table matches the hand rows), declined, or wrong; a turn that should
 * be declined counts a decline whose text does not give its reason as "for another reason". The
 * table splits first questions, follow-ups, and the complete questions that change the subject
 * (where nothing may carry over). Every wrong turn is listed with the reading it stated.
 *
 * The floor beside it is the hand SQL itself: every answerable turn has rows in the data.
 *
 *   pnpm bench:conversations [--model offline] [--only demo|saas] [--verbose]
 *     [--database postgres://postgres@127.0.0.1:5432/postgres]
 */
import { declined as isDecline, matches, options, withAsking } from "./asking.js"
import * as Conversations from "./questions/conversations.js"

const values = options()
const lastYear = new Date().getUTCFullYear() - 1

await withAsking({ port: 18_799, database: values.database }, async (asking) => {
  const conversations = Conversations.conversations(lastYear)
    .filter((c) => values.only === undefined || c.on.toLowerCase() === values.only)
  type Outcome = { correct: number; declined: number; wrong: number; wrongReason: number }
  const empty = (): Outcome => ({ correct: 0, declined: 0, wrong: 0, wrongReason: 0 })
  const groups = new Map<string, Outcome>()
  const outcome = (name: string) => {
    const found = groups.get(name) ?? empty()
    groups.set(name, found)
    return found
  }
  const wrongs: Array<string> = []
  const wrongReasons: Array<string> = []
  let floor = 0
  let answerable = 0
  const started = Date.now()
  for (const [n, conversation] of conversations.entries()) {
    const rowsOf = conversation.on === "DEMO" ? asking.demoRows : asking.saasRows
    const connectorId = conversation.on === "DEMO" ? asking.demoConnector : asking.saasConnector
    let chatId: string | undefined
    for (const [t, [question, sql, reason]] of conversation.turns.entries()) {
      const expected = sql === null ? undefined : await rowsOf(sql)
      if (expected !== undefined) answerable += 1
      if (expected !== undefined && expected.length > 0) floor += 1
      const answer = await asking.ask(
        question,
        chatId === undefined ? { connectorId } : { chatId },
        values.model
      )
      chatId ??= answer.chatId
      const verdict = isDecline(answer)
        ? "declined"
        : expected !== undefined && matches(expected, answer.rows!)
        ? "correct"
        : "wrong"
      // The turn after the first of a conversation that changes the subject with a complete question
      // is the change itself when it names its own measure; the others are follow-ups.
      const kind = t === 0
        ? "first questions"
        : conversation.changesSubject === true && t === conversation.turns.length - 1
        ? "changes of subject"
        : "follow-ups"
      const group = `${kind}${expected === undefined ? ", to decline" : ""}`
      outcome(group)[verdict] += 1
      const label = `${conversation.on} ${String(n + 1).padStart(2)}.${t + 1}`
      console.log(`${label} ${verdict.padEnd(8)} ${question}`)
      const said = answer.text.split("\n\n")[0]!.slice(0, 300)
      if (verdict === "wrong") wrongs.push(`${label} ${question}\n    read: ${said}`)
      if (verdict === "declined" && reason !== undefined && !reason.test(answer.text)) {
        outcome(group).wrongReason += 1
        wrongReasons.push(`${label} ${question} (expected ${reason})\n    said: ${said}`)
      }
      if (values.verbose && verdict !== "correct") {
        console.log(`    said ${said}`)
        console.log(
          `    expected ${JSON.stringify(expected?.slice(0, 6))}\n    answered ${
            JSON.stringify(answer.rows?.slice(0, 6))
          }`
        )
      }
    }
  }
  const total = empty()
  console.log("")
  console.log("| turns | count | correct | declined | of which for another reason | wrong |")
  console.log("|---|---:|---:|---:|---:|---:|")
  const order = ["first questions", "follow-ups", "changes of subject"]
  const names = [...groups.keys()].sort((a, b) =>
    order.indexOf(a.split(",")[0]!) - order.indexOf(b.split(",")[0]!) || a.localeCompare(b)
  )
  for (const name of names) {
    const o = groups.get(name)!
    total.correct += o.correct
    total.declined += o.declined
    total.wrong += o.wrong
    total.wrongReason += o.wrongReason
    console.log(
      `| ${name} | ${o.correct + o.declined + o.wrong} | ${o.correct} | ${o.declined} | ${o.wrongReason} | ${o.wrong} |`
    )
  }
  console.log(
    `| all | ${
      total.correct + total.declined + total.wrong
    } | ${total.correct} | ${total.declined} | ${total.wrongReason} | ${total.wrong} |`
  )
  console.log(`\nfloor: the hand SQL answers ${floor} of ${answerable} answerable turns`)
  console.log(`(${conversations.length} conversations, ${((Date.now() - started) / 1000).toFixed(1)} s)`)
  if (wrongs.length > 0) console.log(`\nWrong turns, with what they read:\n${wrongs.join("\n")}`)
  if (wrongReasons.length > 0) console.log(`\nDeclines for another reason:\n${wrongReasons.join("\n")}`)
})

/**
 * A derived metric's expression (`(revenue - revenue_last_month) / revenue_last_month`): arithmetic
 * over other metrics, read into a tree so that the compiler writes it in each dialect (a division
 * exact and null on zero) and never passes a model's text through as SQL.
 *
 * @internal
 */
import * as Either from "effect/Either"

export type Expression =
  | { readonly _tag: "Number"; readonly value: number }
  | { readonly _tag: "Name"; readonly name: string }
  | { readonly _tag: "Negate"; readonly operand: Expression }
  | {
    readonly _tag: "Binary"
    readonly operator: "+" | "-" | "*" | "/"
    readonly left: Expression
    readonly right: Expression
  }
  | { readonly _tag: "Call"; readonly fn: Fn; readonly args: ReadonlyArray<Expression> }

/** The functions an expression may call, with how many arguments each takes. */
const functions = {
  coalesce: [2, 8],
  nullif: [2, 2],
  abs: [1, 1],
  greatest: [2, 8],
  least: [2, 8],
  round: [1, 2]
} as const satisfies Record<string, readonly [min: number, max: number]>
export type Fn = keyof typeof functions

const token = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/(),]))/y

/**
 * Reads an expression, or says where it stops making sense.
 */
export const parse = (text: string): Either.Either<Expression, string> => {
  const tokens: Array<string> = []
  token.lastIndex = 0
  while (token.lastIndex < text.length) {
    const at = token.lastIndex
    const match = token.exec(text)
    if (match === null) {
      if (text.slice(at).trim() === "") break
      return Either.left(`unexpected ${JSON.stringify(text.slice(at).trim().slice(0, 12))} at character ${at + 1}`)
    }
    tokens.push(match[1] ?? match[2] ?? match[3]!)
  }
  let i = 0
  const peek = () => tokens[i]
  const fail = (what: string): never => {
    throw new SyntaxError(what)
  }
  const expect = (t: string) => {
    if (tokens[i] !== t) fail(`expected ${t}${tokens[i] === undefined ? " at the end" : ` before ${tokens[i]}`}`)
    i++
  }
  const sum = (): Expression => {
    let left = product()
    while (peek() === "+" || peek() === "-") {
      const operator = tokens[i++] as "+" | "-"
      left = { _tag: "Binary", operator, left, right: product() }
    }
    return left
  }
  const product = (): Expression => {
    let left = unary()
    while (peek() === "*" || peek() === "/") {
      const operator = tokens[i++] as "*" | "/"
      left = { _tag: "Binary", operator, left, right: unary() }
    }
    return left
  }
  const unary = (): Expression => {
    if (peek() === "-") {
      i++
      return { _tag: "Negate", operand: unary() }
    }
    if (peek() === "+") i++
    return atom()
  }
  const atom = (): Expression => {
    const t = tokens[i++]
    if (t === undefined) return fail("the expression ends too soon")
    if (t === "(") {
      const inner = sum()
      expect(")")
      return inner
    }
    if (/^\d/.test(t)) return { _tag: "Number", value: Number(t) }
    if (/^[A-Za-z_]/.test(t)) {
      if (peek() !== "(") return { _tag: "Name", name: t }
      const fn = t.toLowerCase()
      if (!(fn in functions)) return fail(`${t} is not a function an expression may call`)
      i++
      const args: Array<Expression> = []
      if (peek() !== ")") {
        args.push(sum())
        while (peek() === ",") {
          i++
          args.push(sum())
        }
      }
      expect(")")
      const [min, max] = functions[fn as Fn]
      if (args.length < min || args.length > max) {
        fail(`${fn} takes ${min === max ? min : `${min} to ${max}`} arguments, not ${args.length}`)
      }
      return { _tag: "Call", fn: fn as Fn, args }
    }
    return fail(`unexpected ${t}`)
  }
  try {
    const expression = sum()
    if (i < tokens.length) return Either.left(`unexpected ${tokens[i]} after a whole expression`)
    return Either.right(expression)
  } catch (error) {
    return Either.left(error instanceof SyntaxError ? error.message : String(error))
  }
}

/** The names an expression reads. */
export const names = (expression: Expression): ReadonlyArray<string> => {
  switch (expression._tag) {
    case "Number":
      return []
    case "Name":
      return [expression.name]
    case "Negate":
      return names(expression.operand)
    case "Binary":
      return [...names(expression.left), ...names(expression.right)]
    case "Call":
      return expression.args.flatMap(names)
  }
}

/** The expression as SQL: each name as `name(…)` writes it, each division as `divide(…)` does. */
export const render = (
  expression: Expression,
  name: (name: string) => string,
  divide: (numerator: string, denominator: string) => string
): string => {
  const go = (e: Expression): string => {
    switch (e._tag) {
      case "Number":
        return String(e.value)
      case "Name":
        return name(e.name)
      case "Negate":
        return `(-${go(e.operand)})`
      case "Binary":
        return e.operator === "/"
          ? `(${divide(go(e.left), go(e.right))})`
          : `(${go(e.left)} ${e.operator} ${go(e.right)})`
      case "Call":
        return `${e.fn.toUpperCase()}(${e.args.map(go).join(", ")})`
    }
  }
  return go(expression)
}

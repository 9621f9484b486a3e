/**
 * Checks of raw input that every operation shares, made before any schema sees it (on /v2 and on
 * the Connect surfaces): JSON nested past `maxJsonDepth` (which would overflow the stack of error
 * formatting), and text that PostgreSQL cannot store (NUL characters, unpaired UTF-16 surrogates)
 * anywhere in a body, a query parameter or the path. Each problem names where it is.
 *
 * @internal
 */

/** The deepest JSON nesting accepted. */
export const maxJsonDepth = 64

const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What is wrong with a text, or undefined when nothing is. */
export const textProblem = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "contains a NUL character"
    : unpairedSurrogate.test(text)
    ? "contains an unpaired UTF-16 surrogate"
    : undefined

/** The nesting depth of JSON text, counted outside strings (stops counting once past `limit`). */
export const jsonDepth = (text: string, limit = maxJsonDepth): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      depth++
      if (depth > deepest) deepest = depth
      if (deepest > limit) return deepest
    } else if (c === 125 || c === 93) depth--
  }
  return deepest
}

const describePath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "the body"
    : path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("")

/** The first string or key of a parsed JSON value that cannot be stored, as `where: problem`. */
export const valueProblem = (value: unknown, path: Array<string | number> = []): string | undefined => {
  if (typeof value === "string") {
    const problem = textProblem(value)
    return problem === undefined ? undefined : `${describePath(path)}: ${problem}`
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = valueProblem(value[i], [...path, i])
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      const keyProblem = textProblem(key)
      if (keyProblem !== undefined) return `a field name in ${describePath(path)}: ${keyProblem}`
      const found = valueProblem(inner, [...path, key])
      if (found !== undefined) return found
    }
  }
  return undefined
}

// A NUL or a surrogate, raw or as a JSON escape: only a body holding one is parsed to find where it is.
const suspicious = /\u0000|[\uD800-\uDFFF]|\\u0000|\\u[dD][89a-fA-F]/

/** What is wrong with a JSON body before decoding: too deep, or text that cannot be stored. */
export const jsonProblem = (text: string): string | undefined => {
  if (jsonDepth(text) > maxJsonDepth) return `the JSON body is nested deeper than ${maxJsonDepth} levels`
  // The common case costs one scan: the decoder parses the body anyway.
  if (!suspicious.test(text)) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined // malformed JSON is the decoder's to report
  }
  return valueProblem(parsed)
}

/** What is wrong with the path or the query string of a URL, if anything. */
export const urlProblem = (url: string): string | undefined => {
  const question = url.indexOf("?")
  const path = question < 0 ? url : url.slice(0, question)
  let decodedPath: string
  try {
    decodedPath = decodeURIComponent(path)
  } catch {
    return "the path has malformed percent-encoding"
  }
  const inPath = textProblem(decodedPath)
  if (inPath !== undefined) return `the path ${inPath}`
  if (question < 0) return undefined
  let params: URLSearchParams
  try {
    params = new URLSearchParams(url.slice(question + 1))
  } catch {
    return "the query string is malformed"
  }
  for (const [name, value] of params) {
    const problem = textProblem(name) ?? textProblem(value)
    if (problem !== undefined) return `query parameter ${JSON.stringify(name.slice(0, 40))}: ${problem}`
  }
  return undefined
}

/** Shortens a message for the wire: errors never echo a large value back. */
export const shorten = (message: string, max = 300): string =>
  message.length <= max ? message : `${message.slice(0, max - 1)}…`

/**
 * Tokens of the Rego subset (`Rego/Parser.ts` lists it): identifiers, strings ("…" with JSON escapes and `…` raw),
 * numbers, operators and punctuation. Newlines are kept as tokens because they separate the literals of a rule body.
 */

export type TokenKind = "ident" | "string" | "number" | "op" | "nl" | "eof"

export interface Token {
  readonly kind: TokenKind
  readonly text: string
  /** The string's or number's value. */
  readonly value?: string | number
  readonly line: number
  readonly col: number
}

export class RegoSyntaxError extends Error {
  constructor(readonly file: string, readonly line: number, readonly col: number, detail: string) {
    super(`${file}:${line}:${col}: rego_parse_error: ${detail}`)
  }
}

const operators = [":=", "==", "!=", "<=", ">=", "<", ">", "=", "+", "-", "*", "/", "%", "(", ")", "[", "]", "{", "}", ",", ".", ";", ":", "|", "&"]

export const tokenize = (source: string, file: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  let line = 1
  let lineStart = 0
  const fail = (detail: string): never => {
    throw new RegoSyntaxError(file, line, i - lineStart + 1, detail)
  }
  const push = (kind: TokenKind, text: string, start: number, value?: string | number) =>
    tokens.push({ kind, text, line, col: start - lineStart + 1, ...(value === undefined ? {} : { value }) })
  while (i < source.length) {
    const c = source[i]!
    if (c === "\n") {
      push("nl", "\n", i)
      i++
      line++
      lineStart = i
    } else if (c === " " || c === "\t" || c === "\r") {
      i++
    } else if (c === "#") {
      while (i < source.length && source[i] !== "\n") i++
    } else if (/[A-Za-z_]/.test(c)) {
      const start = i
      while (i < source.length && /[A-Za-z0-9_]/.test(source[i]!)) i++
      push("ident", source.slice(start, i), start)
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(source.slice(i))!
      push("number", m[0], i, Number(m[0]))
      i += m[0].length
    } else if (c === "\"") {
      const start = i
      i++
      while (i < source.length && source[i] !== "\"") {
        if (source[i] === "\n") fail("non-terminated string")
        i += source[i] === "\\" ? 2 : 1
      }
      if (i >= source.length) fail("non-terminated string")
      i++
      const text = source.slice(start, i)
      let value: string
      try {
        value = JSON.parse(text) as string
      } catch {
        return fail(`invalid string ${text}`)
      }
      push("string", text, start, value)
    } else if (c === "`") {
      const start = i
      const end = source.indexOf("`", i + 1)
      if (end < 0) fail("non-terminated raw string")
      const text = source.slice(start, end + 1)
      push("string", text, start, text.slice(1, -1))
      for (const ch of text) if (ch === "\n") line++
      i = end + 1
    } else {
      const op = operators.find((o) => source.startsWith(o, i))
      if (op === undefined) fail(`unexpected character ${JSON.stringify(c)}`)
      push("op", op!, i)
      i += op!.length
    }
  }
  push("eof", "", i)
  return tokens
}

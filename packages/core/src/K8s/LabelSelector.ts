/**
 * Label selectors with the API server's grammar and semantics, the one matcher the in-memory K8s layer, the dev API
 * server and the agent use: the text form (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`) and `metav1.LabelSelector`
 * objects (`matchLabels` + `matchExpressions`, where an empty selector selects everything).
 */
type Labels = Readonly<Record<string, string>>

export type Requirement =
  | { readonly op: "=" | "!="; readonly key: string; readonly value: string }
  | { readonly op: "in" | "notin"; readonly key: string; readonly values: ReadonlyArray<string> }
  | { readonly op: "exists" | "!"; readonly key: string }
  | { readonly op: ">" | "<"; readonly key: string; readonly value: number }

/** A selector the API server refuses (400), with its message. */
export class LabelSelectorError extends Error {}

/** Splits on commas outside parentheses (`a in (x,y),b` is two requirements). */
export const splitTop = (text: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "(") depth++
    else if (c === ")") depth--
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts.map((p) => p.trim()).filter((p) => p !== "")
}

const keyPattern = /^([a-z0-9A-Z.\-/_]+)$/
const checkKey = (key: string, whole: string): string => {
  if (!keyPattern.test(key)) throw new LabelSelectorError(`unable to parse requirement: invalid label key "${key}" in "${whole}"`)
  return key
}

const parseRequirement = (part: string): Requirement => {
  if (part.startsWith("!")) return { op: "!", key: checkKey(part.slice(1).trim(), part) }
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part)
  if (set) {
    const values = set[3]!.split(",").map((v) => v.trim()).filter((v) => v !== "")
    return { op: set[2] as "in" | "notin", key: checkKey(set[1]!, part), values }
  }
  const cmp = /^([^!=<>\s]+)\s*(==|=|!=|>|<)\s*(.*)$/.exec(part)
  if (cmp) {
    const key = checkKey(cmp[1]!, part)
    const op = cmp[2]!
    const raw = cmp[3]!.trim()
    if (op === ">" || op === "<") {
      const value = Number(raw)
      if (!Number.isInteger(value)) throw new LabelSelectorError(`unable to parse requirement: "${part}" needs an integer`)
      return { op, key, value }
    }
    return { op: op === "!=" ? "!=" : "=", key, value: raw }
  }
  return { op: "exists", key: checkKey(part, part) }
}

/** The requirements of a text selector; throws LabelSelectorError where the API server answers 400. */
export const parseLabelSelector = (text: string | undefined): ReadonlyArray<Requirement> => text === undefined ? [] : splitTop(text).map(parseRequirement)

const matches = (r: Requirement, labels: Labels): boolean => {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key)
  const value = labels[r.key]
  switch (r.op) {
    case "=":
      return has && value === r.value
    case "!=":
      return !has || value !== r.value
    case "in":
      return has && r.values.includes(value!)
    case "notin":
      return !has || !r.values.includes(value!)
    case "exists":
      return has
    case "!":
      return !has
    case ">":
      return has && Number(value) > r.value
    case "<":
      return has && Number(value) < r.value
  }
}

export const matchLabels = (requirements: ReadonlyArray<Requirement>, labels: Labels | undefined): boolean =>
  requirements.every((r) => matches(r, labels ?? {}))

/** `metav1.LabelSelector` (matchLabels + matchExpressions). */
export interface LabelSelector {
  readonly matchLabels?: Labels
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string
    readonly operator: string
    readonly values?: ReadonlyArray<string>
  }>
}

export const selectorRequirements = (selector: LabelSelector): ReadonlyArray<Requirement> => [
  ...Object.entries(selector.matchLabels ?? {}).map(([key, value]): Requirement => ({ op: "=", key, value })),
  ...(selector.matchExpressions ?? []).map((e): Requirement => {
    switch (e.operator) {
      case "In":
        return { op: "in", key: e.key, values: e.values ?? [] }
      case "NotIn":
        return { op: "notin", key: e.key, values: e.values ?? [] }
      case "Exists":
        return { op: "exists", key: e.key }
      default:
        return { op: "!", key: e.key }
    }
  })
]

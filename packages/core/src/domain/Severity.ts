/**
 * The 4-level severity model of release 1.5.2 plus `unknown` as classification fallback. `medium` and `low` are
 * accepted only as input aliases (of `warning` and `info`); output is always one of the five canonical values.
 */
import { Order, Schema } from "effect"
import { Enum } from "./Common.ts"

export const SeverityValues = ["critical", "high", "warning", "info", "unknown"] as const

/** Canonical severity (what we write and return). */
export const Severity = Enum(...SeverityValues)
export type Severity = typeof Severity.Type

/** The four levels a caller may filter by (`svc_list_alerts`, workflow labels without `*`). */
export const SeverityLevel = Enum("critical", "high", "warning", "info")
export type SeverityLevel = typeof SeverityLevel.Type

const aliases: Readonly<Record<string, Severity>> = { medium: "warning", low: "info" }

/**
 * Severity as accepted on input: the canonical values and the aliases `medium` -> `warning`, `low` -> `info`,
 * compared case-insensitively. Anything else is rejected. Encodes to the canonical value.
 */
export const SeverityInput = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s) => toSeverity(s) !== undefined || `must be one of ${SeverityValues.join(", ")} (or the aliases medium, low)`)
  ),
  Severity,
  { strict: true, decode: (s) => toSeverity(s)!, encode: (s) => s }
)

/**
 * Severity read from upstream data (signals, RR specs) where a value outside the model must not fail the whole
 * object: unrecognised values become `unknown`.
 */
export const SeverityLenient = Schema.transform(Schema.String, Severity, {
  strict: true,
  decode: (s) => classifySeverity(s),
  encode: (s) => s
})

const toSeverity = (raw: string): Severity | undefined => {
  const s = raw.trim().toLowerCase()
  return (SeverityValues as ReadonlyArray<string>).includes(s) ? (s as Severity) : aliases[s]
}

/** Total classification: canonical value, alias, or `unknown`. */
export const classifySeverity = (raw: string | undefined): Severity => (raw === undefined ? undefined : toSeverity(raw)) ?? "unknown"

/** Rank for sorting: higher is more severe (`critical` 4 … `unknown` 0). */
export const severityRank: { readonly [S in Severity]: number } = {
  critical: 4,
  high: 3,
  warning: 2,
  info: 1,
  unknown: 0
}

/** Most severe first. */
export const SeverityDescending: Order.Order<Severity> = Order.reverse(
  Order.mapInput(Order.number, (s: Severity) => severityRank[s])
)

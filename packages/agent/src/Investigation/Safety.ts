/**
 * What tool output passes through before the model reads it: credentials are scrubbed, phrases that try to steer
 * the model are neutralised, and the result is capped. Cluster data is attacker-influenced (pod logs, events,
 * annotations), so the model is also told that tool output is data, never instructions.
 */
import { CredentialMarker, replaceCounting, scrubCredentials } from "@kubemend/core/Credentials"

export { CredentialMarker, scrubCredentials }

export interface SanitizeSettings {
  readonly injectionPatternsEnabled: boolean
  readonly credentialScrubEnabled: boolean
  readonly maxToolOutputSize: number
}

export interface Sanitized {
  readonly text: string
  readonly injections: number
  readonly credentials: number
  readonly truncated: boolean
}

export const InjectionMarker = "[REMOVED: instruction-like text in tool output]"

/** Phrases addressed to an AI rather than describing the system; matched case-insensitively. */
const injectionPatterns: ReadonlyArray<RegExp> = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|your|system)\b[^.\n]{0,40}\b(instructions?|prompts?|rules|directives|guidelines|context)\b[^.\n]*/gi,
  /\b(you are now|from now on,? you|act as|pretend to be|roleplay as)\b[^.\n]*/gi,
  /\b(new|updated|real|actual)\s+(instructions?|system prompt|directives?)\s*:[^\n]*/gi,
  /\b(system prompt|developer message)\b[^.\n]*\b(reveal|print|show|repeat|output)\b[^.\n]*/gi,
  /\b(reveal|print|show|repeat|output)\b[^.\n]*\b(system prompt|developer message|your instructions)\b[^.\n]*/gi,
  /<\|?(im_start|im_end|system|endoftext)\|?>/gi,
  /\[\/?(INST|SYS)\]|<<\/?SYS>>/g,
  /^\s*(system|assistant)\s*:\s.*$/gim,
  /\b(select|choose|recommend|execute|run)\s+(the\s+)?workflow\b[^.\n]*\b(instead|regardless|always|immediately)\b[^.\n]*/gi,
  /\bset\s+(confidence|needs_human_review|is_actionable)\b[^.\n]*/gi
]

export const neutralizeInjections = (text: string): [string, number] =>
  injectionPatterns.reduce<[string, number]>(([t, n], pattern) => {
    const [out, c] = replaceCounting(t, pattern, InjectionMarker)
    return [out, n + c]
  }, [text, 0])

const secretKey = /(password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)$/i

type CleanSettings = Omit<SanitizeSettings, "maxToolOutputSize">

/** Cleans every string of a JSON value (strings are checked before serialisation, so escapes hide nothing). */
const walk = (value: unknown, settings: CleanSettings, counts: { injections: number; credentials: number }, key?: string): unknown => {
  if (typeof value === "string") {
    if (settings.credentialScrubEnabled && key !== undefined && secretKey.test(key) && value !== "") {
      counts.credentials++
      return CredentialMarker
    }
    const [scrubbed, c] = settings.credentialScrubEnabled ? scrubCredentials(value) : [value, 0]
    const [neutral, i] = settings.injectionPatternsEnabled ? neutralizeInjections(scrubbed) : [scrubbed, 0]
    counts.credentials += c
    counts.injections += i
    return neutral
  }
  if (Array.isArray(value)) return value.map((v) => walk(v, settings, counts))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, settings, counts, k)]))
  }
  return value
}

/** A tool result cleaned and serialised, not yet capped. */
export const clean = (content: unknown, settings: CleanSettings): Omit<Sanitized, "truncated"> => {
  const counts = { injections: 0, credentials: 0 }
  const cleaned = walk(content, settings, counts)
  const text = typeof cleaned === "string" ? cleaned : JSON.stringify(cleaned)
  return { text, injections: counts.injections, credentials: counts.credentials }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Cuts `text` to `maxBytes` of UTF-8 (the CR's `maxToolOutputSize` is in bytes) and says how much was left out. A
 * character split by the cut is dropped rather than shown as a replacement character.
 */
export const truncate = (text: string, maxBytes: number): { readonly text: string; readonly truncated: boolean } => {
  const bytes = encoder.encode(text)
  if (bytes.length <= maxBytes) return { text, truncated: false }
  const kept = decoder.decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD$/, "")
  return { text: `${kept}\n[truncated: ${bytes.length - encoder.encode(kept).length} more bytes]`, truncated: true }
}

/** A tool result as the model reads it: cleaned, serialised, capped. */
export const sanitize = (content: unknown, settings: SanitizeSettings): Sanitized => {
  const cleaned = clean(content, settings)
  const capped = truncate(cleaned.text, settings.maxToolOutputSize)
  return { ...cleaned, text: capped.text, truncated: capped.truncated }
}

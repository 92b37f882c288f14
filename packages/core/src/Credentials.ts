/**
 * Credentials scrubbed out of free text by their shape (private keys, JWTs, cloud and chat tokens, bearer/basic
 * headers, URL passwords, `password=`-style assignments): what the agent does to tool output before a model reads
 * it, and what the workflow execution controller does to a failed run's log tail before it lands in a status.
 */

export const CredentialMarker = "[REDACTED]"

/** Secrets by shape; the key name is kept so the model still sees that a value was there. */
const credentialPatterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, CredentialMarker],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, CredentialMarker],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, CredentialMarker],
  [/\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}\b/g, CredentialMarker],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, CredentialMarker],
  [/\bsk-[A-Za-z0-9_-]{20,}\b/g, CredentialMarker],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi, `$1 ${CredentialMarker}`],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi, `$1:${CredentialMarker}@`],
  [
    /("?\b[\w.-]*(password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)\b"?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;}\]]+)/gi,
    `$1${CredentialMarker}`
  ]
]

/** `text.replace(pattern, replacement)` (`$n` group references) and how many matches it replaced. */
export const replaceCounting = (text: string, pattern: RegExp, replacement: string): [string, number] => {
  let count = 0
  const out = text.replace(pattern, (...args: Array<unknown>) => {
    count++
    const groups = args.slice(1, -2) as Array<string | undefined>
    return replacement.replace(/\$(\d)/g, (_, i: string) => groups[Number(i) - 1] ?? "")
  })
  return [out, count]
}

export const scrubCredentials = (text: string): [string, number] =>
  credentialPatterns.reduce<[string, number]>(([t, n], [pattern, replacement]) => {
    const [out, c] = replaceCounting(t, pattern, replacement)
    return [out, n + c]
  }, [text, 0])

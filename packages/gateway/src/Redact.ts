/**
 * What the gateway tells callers of failures and alerts, redacted of URLs, addresses and tokens: apart from the MCP
 * layer so that the agent client and the A2A agent redact the same way without importing it.
 */

const patterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bbearer\s+[A-Za-z0-9._~+/=-]+/gi, "Bearer [REDACTED]"],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, "[REDACTED_TOKEN]"],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, "[REDACTED_URL]"],
  [/\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g, "[REDACTED_IP]"],
  // Full IPv6, or compressed (`::`); plain `12:30:45` times are left alone.
  [/\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|(?:\b[0-9a-f]{1,4})?(?::[0-9a-f]{1,4})*::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?/gi, "[REDACTED_IP]"],
  [/((?:password|passwd|secret|token|api[_-]?key|credential)s?\s*[=:]\s*)\S+/gi, "$1[REDACTED]"]
]

/** An error message safe to show: no URLs, IP addresses, bearer tokens or `secret=…` values. */
export const redactMessage = (message: string): string => patterns.reduce((m, [re, by]) => m.replace(re, by), message).slice(0, 2048)

/** Values inside alert labels and annotations: URLs and IP addresses only. */
export const redactValue = (value: string): string =>
  value.replace(patterns[2]![0], "[REDACTED_URL]").replace(patterns[3]![0], "[REDACTED_IP]").replace(patterns[4]![0], "[REDACTED_IP]")

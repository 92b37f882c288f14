/**
 * RFC 7386 JSON merge patch, the one the in-memory K8s layer and the dev API server both apply: objects merge
 * recursively, `null` removes a key, anything else replaces (copied, so the result never shares the patch's values).
 */
const isPlainObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isPlainObject(patch)) return structuredClone(patch)
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}

/**
 * Label selectors (LabelSelector.ts) and field selectors, as the API server applies them; the in-memory layer uses
 * these so its answers match a real server's.
 */
import type { KubeObject } from "../K8s.ts"
import { LabelSelectorError, matchLabels, parseLabelSelector, splitTop } from "./LabelSelector.ts"
import { HttpFailure } from "./Retry.ts"

type Requirement =
  | { readonly op: "=" | "!="; readonly key: string; readonly value: string }
  | { readonly op: "in" | "notin"; readonly key: string; readonly values: ReadonlyArray<string> }
  | { readonly op: "exists" | "!exists"; readonly key: string }

const parseTerm = (term: string): Requirement => {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term)
  if (set) return { op: set[2] as "in" | "notin", key: set[1]!, values: set[3]!.split(",").map((v) => v.trim()) }
  const ne = /^([^!=\s]+)\s*!=\s*(.*)$/.exec(term)
  if (ne) return { op: "!=", key: ne[1]!, value: ne[2]!.trim() }
  const eq = /^([^!=\s]+)\s*==?\s*(.*)$/.exec(term)
  if (eq) return { op: "=", key: eq[1]!, value: eq[2]!.trim() }
  if (term.startsWith("!")) return { op: "!exists", key: term.slice(1).trim() }
  return { op: "exists", key: term }
}

const matches = (requirements: ReadonlyArray<Requirement>, lookup: (key: string) => string | undefined): boolean =>
  requirements.every((r) => {
    const v = lookup(r.key)
    switch (r.op) {
      case "=":
        return v === r.value
      case "!=":
        return v !== r.value
      case "in":
        return v !== undefined && r.values.includes(v)
      case "notin":
        return v === undefined || !r.values.includes(v)
      case "exists":
        return v !== undefined
      case "!exists":
        return v === undefined
    }
  })

/** The label selector as a filter, or the API server's 400 for a selector it refuses. */
export const labelFilter = (selector: string | undefined): ((o: KubeObject) => boolean) | HttpFailure => {
  try {
    const requirements = parseLabelSelector(selector)
    return (o) => matchLabels(requirements, o.metadata.labels)
  } catch (e) {
    if (e instanceof LabelSelectorError) return new HttpFailure({ status: 400, message: e.message })
    throw e
  }
}

const fieldValue = (o: KubeObject, path: string): string | undefined => {
  let cur: unknown = o
  for (const part of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur === undefined || cur === null ? undefined : String(cur)
}

/** Field selectors support `=`, `==` and `!=` on dotted paths (`metadata.name`, `involvedObject.kind`, `reason`). */
export const matchesFields = (o: KubeObject, selector: string | undefined): boolean =>
  selector === undefined || matches(splitTop(selector).map(parseTerm), (k) => fieldValue(o, k) ?? "")

/** Label selectors (core's K8s/LabelSelector.ts, refusals as 400s) and field selectors with the real server's grammar. */
import { LabelSelectorError, parseLabelSelector as parseText, type Requirement, splitTop } from "@kubemend/core/K8s/LabelSelector"
import { badRequest } from "./Status.ts"

export { matchLabels, type Requirement } from "@kubemend/core/K8s/LabelSelector"

/** The text selector's requirements; a selector the API server refuses answers 400 with its message. */
export const parseLabelSelector = (text: string | undefined): ReadonlyArray<Requirement> => {
  try {
    return parseText(text)
  } catch (e) {
    if (e instanceof LabelSelectorError) throw badRequest(e.message)
    throw e
  }
}

export interface FieldRequirement {
  readonly field: string
  readonly negate: boolean
  readonly value: string
}

export const parseFieldSelector = (
  text: string | undefined,
  allowed: ReadonlyArray<string>,
  kind: string
): ReadonlyArray<FieldRequirement> =>
  text === undefined
    ? []
    : splitTop(text).map((part) => {
      const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(part)
      if (!m) throw badRequest(`invalid selector: '${part}'; can't understand '${part}'`)
      const field = m[1]!.trim()
      if (field !== "metadata.name" && field !== "metadata.namespace" && !allowed.includes(field)) {
        throw badRequest(`field label not supported: ${field} for ${kind}`)
      }
      return { field, negate: m[2] === "!=", value: m[3]!.trim() }
    })

const fieldValue = (object: unknown, path: string): string => {
  let current: unknown = object
  for (const part of path.split(".")) {
    if (typeof current !== "object" || current === null) return ""
    current = (current as Record<string, unknown>)[part]
  }
  if (current === undefined || current === null) return ""
  // `source` on core Events selects on source.component.
  if (typeof current === "object") return String((current as Record<string, unknown>)["component"] ?? "")
  return String(current)
}

export const matchFields = (requirements: ReadonlyArray<FieldRequirement>, object: unknown): boolean =>
  requirements.every((r) => (fieldValue(object, r.field) === r.value) !== r.negate)

export { type LabelSelector, selectorRequirements } from "@kubemend/core/K8s/LabelSelector"

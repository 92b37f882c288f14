/**
 * The shipped default policies (`packages/operator/policies/`): policy.rego classifies signals as the platform
 * always did (alert labels, then namespace labels, then severity) and approval.rego requires approval below the
 * confidence threshold or when the investigation asks for review. A platform team copies them into the ConfigMaps
 * its platform CR names and edits them there.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const dir = Path.resolve(import.meta.dirname, "..", "..", "policies")

export const defaultPolicies = {
  "policy.rego": Fs.readFileSync(Path.join(dir, "policy.rego"), "utf8"),
  "approval.rego": Fs.readFileSync(Path.join(dir, "approval.rego"), "utf8")
} as const

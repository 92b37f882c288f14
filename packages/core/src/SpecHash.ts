/**
 * The canonical spec hash of a Kubernetes object (original: DD-EM-002): `sha256:<hex>` over the canonical JSON of
 * what the object declares. The execution side captures it before a workflow runs (`preRemediationSpecHash`), the
 * effectiveness monitor after the run and again while it assesses, so drift made by someone else shows as a changed
 * hash. One function for both sides: two spellings would make every comparison a false drift.
 *
 * What is hashed: `.spec` when the object has one; otherwise (ConfigMap, Secret, ServiceAccount …) everything but
 * `apiVersion`, `kind`, `metadata` and `status`, i.e. `data`, `binaryData`, `rules` and the like.
 */
import { createHash } from "node:crypto"
import { canonicalJson } from "./CanonicalJson.ts"

const envelope = new Set(["apiVersion", "kind", "metadata", "status"])

/** The part of `object` the hash covers (a value that is not an object is hashed as it is). */
const declaredState = (object: unknown): unknown => {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return object ?? null
  const o = object as Record<string, unknown>
  return o["spec"] !== undefined ? o["spec"] : Object.fromEntries(Object.entries(o).filter(([k]) => !envelope.has(k)))
}

/**
 * `sha256:<64 hex>` of the object's declared state. Pass the whole object: for a kind without `.spec` (ConfigMap)
 * the declared state is its `data`; a `.spec` passed alone hashes the same as its object.
 */
export const specHash = (object: unknown): string => `sha256:${createHash("sha256").update(canonicalJson(declaredState(object))).digest("hex")}`

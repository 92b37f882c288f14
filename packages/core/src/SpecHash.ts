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

/** The part of `object` the hash covers. */
export const declaredState = (object: { readonly [key: string]: unknown }): unknown =>
  object["spec"] !== undefined
    ? object["spec"]
    : Object.fromEntries(Object.entries(object).filter(([k]) => !envelope.has(k)))

/** `sha256:<64 hex>` of the object's declared state. */
export const specHash = (object: { readonly [key: string]: unknown }): string =>
  `sha256:${createHash("sha256").update(canonicalJson(declaredState(object))).digest("hex")}`

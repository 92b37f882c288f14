/**
 * Secret values never leave the K8s layer: generic reads replace every `.data` / `.stringData` value with a marker
 * and keep the keys (callers may need to know a key exists). `kubectl apply` copies the whole manifest, values
 * included, into the last-applied annotation, so that annotation is redacted too.
 */
import type { KubeObject } from "../K8s.ts"

export const redactedValue = "<redacted>"
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

const redactValues = (values: unknown): unknown =>
  typeof values === "object" && values !== null && !Array.isArray(values)
    ? Object.fromEntries(Object.keys(values).map((k) => [k, redactedValue]))
    : values

const isSecret = (o: KubeObject): boolean => o.kind === "Secret" && (o.apiVersion === undefined || o.apiVersion === "v1")

/** The object with Secret values redacted; any other kind unchanged. */
export const redactSecret = (o: KubeObject): KubeObject => {
  if (!isSecret(o)) return o
  const { data, stringData, ...rest } = o
  const annotations = o.metadata.annotations
  const metadata = annotations !== undefined && lastApplied in annotations
    ? { ...o.metadata, annotations: { ...annotations, [lastApplied]: redactedValue } }
    : o.metadata
  return {
    ...rest,
    metadata,
    ...(data === undefined ? {} : { data: redactValues(data) }),
    ...(stringData === undefined ? {} : { stringData: redactValues(stringData) })
  }
}

/** List items come without apiVersion/kind; `kind` is the list's item kind. */
export const redactItems = (kind: string, items: ReadonlyArray<KubeObject>): ReadonlyArray<KubeObject> =>
  kind === "Secret" ? items.map((o) => redactSecret({ ...o, kind: "Secret" })) : items

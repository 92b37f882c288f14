/**
 * Pieces the tool groups share: argument schemas that keep names safe (no `/`, `..` or control characters reach
 * the cluster or storage), the cluster-error mapping, and small views of the custom resources.
 */
import { Effect, Schema } from "effect"
import type { K8sNotFound, K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"

/** A Kubernetes object name (DNS subdomain), never `..`. */
export const ResourceName = Schema.String.pipe(
  Schema.pattern(/^(?!.*\.\.)[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, {
    message: () => "must be a Kubernetes resource name (lower-case letters, digits, '-' and '.')"
  })
)

/**
 * A resource in the controller namespace, by name or as `namespace/name` (the original console's form of `rar_id`).
 * `inControllerNamespace` resolves it to the plain name.
 */
export const QualifiedName = Schema.String.pipe(
  Schema.pattern(/^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/)?(?!.*\.\.)[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, {
    message: () => "must be a Kubernetes resource name, or namespace/name"
  })
)

/** The plain name of a `QualifiedName`; another namespace than the controller's is refused, naming the right one. */
export const inControllerNamespace = (value: string, controllerNamespace: string, what: string) =>
  Effect.suspend(() => {
    const slash = value.indexOf("/")
    if (slash < 0) return Effect.succeed(value)
    const namespace = value.slice(0, slash)
    return namespace === controllerNamespace
      ? Effect.succeed(value.slice(slash + 1))
      : Effect.fail(
        new ToolError({
          message: `${what} ${value} is not in the controller namespace ${controllerNamespace}, where every ${what} lives`,
          code: "not_found"
        })
      )
  })

/** A namespace (DNS label). */
export const NamespaceName = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, { message: () => "must be a Kubernetes namespace name" })
)

/** A kind such as `Deployment`. */
export const KindName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z][A-Za-z0-9]{0,62}$/, { message: () => "must be a Kubernetes kind such as Deployment" })
)

/** `v1`, `apps/v1`, `kubemend.io/v1alpha1`. */
export const ApiVersion = Schema.String.pipe(
  Schema.pattern(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/, {
    message: () => "must be an apiVersion such as v1 or apps/v1"
  })
)

/** Free text without control characters other than newline and tab. */
export const Text = (max: number) =>
  Schema.String.pipe(
    Schema.pattern(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/, { message: () => "must not contain control characters" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

export const optional = Schema.optional

/** The target of `rr_id`/`rar_id` or its alias `name`; one is required (behaviour rule 1). */
export const idOrName = (input: { readonly name?: string | undefined }, id: string | undefined, what: string) =>
  Effect.suspend(() => {
    const value = id ?? input.name
    return value === undefined || value === ""
      ? Effect.fail(new ToolError({ message: `${what} or its alias name is required`, code: "invalid_arguments" }))
      : Effect.succeed(value)
  })

/** Cluster failures as tool errors: not found is the caller's answer, anything else an outage. */
export const k8sFailure = (what: string) => (e: K8sNotFound | K8sUnavailable) =>
  e._tag === "K8sNotFound"
    ? new ToolError({ message: `${what} not found`, code: "not_found" })
    : new ToolError({ message: "the cluster API is unavailable, please retry", code: "cluster_unavailable" })

export const record = (u: unknown): Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}

export const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

export const num = (u: unknown): number | undefined => (typeof u === "number" ? u : undefined)

export type Compact<T> =
  & { [K in keyof T as undefined extends T[K] ? never : K]: T[K] }
  & { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> }

/** Drops undefined fields (results stay compact; optional fields are left out rather than undefined). */
export const compact = <T extends Record<string, unknown>>(o: T): Compact<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Compact<T>

export const specOf = (o: KubeObject) => record(o.spec)
export const statusOf = (o: KubeObject) => record(o.status)

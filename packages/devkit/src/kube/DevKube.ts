/**
 * The dev Kubernetes API server as tests and the local platform hold it: a handle with the URL, store access,
 * seeding, faults and tokens, plus an Effect Tag whose layer starts it for a scope and closes it after.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { Faults } from "./Faults.ts"
import type { KubeConfigOptions } from "./KubeConfig.ts"
import type { ServiceAccountTokenOptions, TokenUser } from "./Reviews.ts"
import type { RecordedRequest } from "./Router.ts"
import { type DevKubeOptions, start } from "./Server.ts"
import type { Obj } from "./Store.ts"

export interface DevKube {
  /** `http://127.0.0.1:<port>` (or https when started with `tls`). */
  readonly url: string
  readonly port: number
  /** The platform CRs' API group (default `kubemend.io`). */
  readonly apiGroup: string
  /** PEM of the generated CA when serving HTTPS. */
  readonly caPem?: string
  readonly faults: Faults
  /** Ends open watches and stops the server. */
  readonly close: () => Promise<void>

  /** Store access for assertions; kinds are resolved by apiVersion + kind, like `kubectl get`. */
  readonly get: (apiVersion: string, kind: string, name: string, namespace?: string) => Obj | undefined
  readonly list: (apiVersion: string, kind: string, namespace?: string) => ReadonlyArray<Obj>
  /** Create or overwrite one object (status kept, resourceVersion ignored; watchers see the change). */
  readonly put: (object: unknown) => Obj
  /** DELETE semantics: true when removed, false when only marked (finalizers) or missing. */
  readonly delete: (apiVersion: string, kind: string, name: string, namespace?: string) => boolean
  readonly seed: (objects: ReadonlyArray<unknown>) => ReadonlyArray<Obj>
  /** Multi-document YAML (`---`), `kind: List` allowed. */
  readonly seedYaml: (text: string) => ReadonlyArray<Obj>

  /** A token TokenReview authenticates as `system:serviceaccount:<namespace>:<name>`. */
  readonly registerServiceAccountToken: (namespace: string, name: string, options?: ServiceAccountTokenOptions) => string
  readonly registerToken: (token: string, user: TokenUser) => void
  readonly revokeToken: (token: string) => void

  /** Requests seen so far (bounded to the last 10 000), with the bearer token each one sent. */
  readonly requests: () => ReadonlyArray<RecordedRequest>
  readonly clearRequests: () => void
  readonly kubeConfig: (options?: KubeConfigOptions) => string

  /** The current global resourceVersion. */
  readonly resourceVersion: () => string
  /** Drop all retained watch history: watching from any older resourceVersion now answers 410. */
  readonly compactHistory: () => void
  readonly setWatchHistory: (size: number) => void
  /** Send a BOOKMARK now on every open watch that allowed bookmarks. */
  readonly sendBookmarks: () => void
  readonly openWatches: () => number
  /** Sets a container's current (or previous, terminated) log, served at `pods/<name>/log`. */
  readonly setPodLog: (namespace: string, pod: string, container: string, text: string, previous?: boolean) => void
}

const tag = Context.GenericTag<DevKube>("@kubemend/core/devkit/DevKube")

/** Started for the enclosing scope, closed when it ends. */
const scoped = (options?: DevKubeOptions): Effect.Effect<DevKube, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (kube) => Effect.promise(() => kube.close())
  )

export const DevKube = Object.assign(tag, {
  scoped,
  layer: (options?: DevKubeOptions): Layer.Layer<DevKube> => Layer.scoped(tag, scoped(options))
})

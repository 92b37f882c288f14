/**
 * The AWX / Ansible Automation Platform REST API (v2) as the ansible engine and the platform's `AnsibleReady`
 * condition use it: the connection from `ansible.*` (token and CA bundle read from their Secrets in the controller
 * namespace), one JSON call with a deadline, and the reachability check (`GET /api/v2/me/` with the token, so a
 * wrong token is not called ready).
 */
import { HttpBody, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import type { K8sUnavailable } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import { EngineUnavailable } from "./Engine.ts"
import type { AnsibleSettings, SecretKeyRef } from "../remediation/ExecutionConfig.ts"

export interface AwxConnection {
  /** `https://awx.example.com` (no trailing slash). */
  readonly baseUrl: string
  readonly token: string | undefined
  /** PEM bundle trusted for `baseUrl`, besides the system roots. */
  readonly ca: string | undefined
  readonly organizationID: number
  readonly timeout: Duration.Duration
}

const secretValue = (cluster: ClusterService, namespace: string, ref: SecretKeyRef | undefined) =>
  ref === undefined
    ? Effect.succeed(undefined)
    : Effect.flatMap(cluster.get({ apiVersion: "v1", kind: "Secret", name: ref.name, namespace }), (found) => {
      const data = Option.getOrUndefined(found)?.["data"] as Record<string, string> | undefined
      const encoded = data?.[ref.key]
      return encoded === undefined
        ? Effect.fail(new EngineUnavailable({ engine: "ansible", message: `Secret ${namespace}/${ref.name} has no key ${ref.key}` }))
        : Effect.succeed(Buffer.from(encoded, "base64").toString("utf8").trim())
    })

export const awxConnection = (
  cluster: ClusterService,
  namespace: string,
  settings: AnsibleSettings,
  timeout: Duration.Duration
): Effect.Effect<AwxConnection, EngineUnavailable | K8sUnavailable> =>
  Effect.gen(function* () {
    if (settings.apiURL === undefined) return yield* new EngineUnavailable({ engine: "ansible", message: "ansible.apiURL is not set" })
    return {
      baseUrl: settings.apiURL.replace(/\/+$/, ""),
      token: yield* secretValue(cluster, namespace, settings.tokenSecretRef),
      ca: yield* secretValue(cluster, namespace, settings.caCertSecretRef),
      organizationID: settings.organizationID,
      timeout
    }
  })

export interface AwxAnswer {
  readonly status: number
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- AWX's JSON answer, fields checked where read
  readonly body: any
}

/** One call; a transport failure or timeout is `EngineUnavailable`, every HTTP status is an answer. */
export const awxCall = (conn: AwxConnection, method: "GET" | "POST", path: string, body?: unknown) =>
  Effect.scoped(Effect.gen(function* () {
    const agent = yield* NodeHttpClient.makeAgent(conn.ca === undefined ? {} : { ca: conn.ca })
    const client = yield* Effect.provideService(NodeHttpClient.make, NodeHttpClient.HttpAgent, agent)
    let request = HttpClientRequest.make(method)(`${conn.baseUrl}${path}`).pipe(HttpClientRequest.acceptJson)
    if (conn.token !== undefined) request = HttpClientRequest.bearerToken(request, conn.token)
    if (body !== undefined) request = HttpClientRequest.setBody(request, HttpBody.unsafeJson(body))
    const response = yield* client.execute(request)
    const text = yield* response.text
    let json: unknown = text
    try {
      json = text === "" ? {} : JSON.parse(text)
    } catch {
      // AWX answers stdout as text/plain.
    }
    const answer: AwxAnswer = { status: response.status, body: json }
    return answer
  })).pipe(
    Effect.timeoutFail({
      duration: conn.timeout,
      onTimeout: () => new EngineUnavailable({ engine: "ansible", message: `${method} ${path}: no answer within ${Duration.format(conn.timeout)}` })
    }),
    Effect.catchTag("RequestError", "ResponseError", (e) =>
      Effect.fail(new EngineUnavailable({ engine: "ansible", message: `${method} ${conn.baseUrl}${path}: ${e.message}` }))),
    Effect.withSpan("Awx.call", { attributes: { method, path } })
  )

export type Reachability =
  | { readonly _tag: "Reachable"; readonly user: string }
  | { readonly _tag: "Unauthorized"; readonly message: string }
  | { readonly _tag: "Unreachable"; readonly message: string }

/** Whether the API answers and accepts the token. */
export const awxReachability = (conn: AwxConnection): Effect.Effect<Reachability> =>
  awxCall(conn, "GET", "/api/v2/me/").pipe(
    Effect.map((a): Reachability => {
      if (a.status === 200) return { _tag: "Reachable", user: String(a.body?.results?.[0]?.username ?? "") }
      if (a.status === 401 || a.status === 403) return { _tag: "Unauthorized", message: `${conn.baseUrl} refused the token (${a.status})` }
      return { _tag: "Unreachable", message: `${conn.baseUrl}/api/v2/me/ answered ${a.status}` }
    }),
    Effect.catchAll((e) => Effect.succeed<Reachability>({ _tag: "Unreachable", message: e.message }))
  )

/** What `npm start` prints and writes to `.local/stack.json` (the shape README, tests and benchmarks rely on). */
import { Duration, Effect, Schedule } from "effect"
import type { Controllers } from "./Controllers.ts"
import type { Replica } from "./Replicas.ts"

export interface Endpoint {
  readonly url: string
  readonly healthUrl: string
  readonly metricsUrl: string
  /** The processes behind `url` (LOCAL_REPLICAS; one by default), each with its own ports. */
  readonly replicas: ReadonlyArray<Replica>
}

export interface StackJson {
  readonly gateway: Endpoint
  readonly agent: Endpoint
  readonly storage: Endpoint
  /** Signal ingestion: Alertmanager webhooks and Kubernetes events in. */
  readonly signals: Endpoint
  /** The devkit CA that signed every API's certificate (`url`s are https; health and metrics are plain http). */
  readonly tls: { readonly caFile: string }
  /**
   * The controller processes (LOCAL_REPLICAS > 1; absent with one replica, whose controllers run in the platform's
   * own process), one leading under the Lease: `svc_leader{lease,identity}` is 1 on its metrics.
   */
  readonly controllers?: Controllers
  /** The web console (sign in through the dev issuer's persona page). */
  readonly console: Endpoint
  readonly kube: { readonly url: string }
  readonly issuer: { readonly url: string }
  readonly llm: { readonly url: string; readonly provider: string; readonly model: string }
  readonly alerts: { readonly url: string }
  /** The policy engine (OPA's REST API, https) the controllers evaluate policy.rego and approval.rego with. */
  readonly policy: { readonly url: string }
  /** The local webhook receiver the notification controller delivers to; `deliveriesUrl` lists what arrived. */
  readonly notifications: { readonly url: string; readonly deliveriesUrl: string }
  readonly namespace: string
  readonly apiGroup: string
  readonly toolPrefix: string
  readonly tokens: Readonly<Record<string, string>>
  /** ServiceAccount tokens TokenReview accepts (storage takes any of them). */
  readonly serviceTokens: {
    readonly gateway: string
    readonly agent: string
    readonly operator: string
    /** Allowed to post signals (bound to `gateway-signal-source`), as Alertmanager would. */
    readonly alertmanager: string
  }
}

export const printSummary = (stack: StackJson, elapsedMs: number) => {
  const sre = stack.tokens["sre"] ?? ""
  const mcpConfig = {
    mcpServers: {
      kubemend: { type: "streamable-http", url: `${stack.gateway.url}/mcp`, headers: { Authorization: `Bearer ${sre}` } }
    }
  }
  const lines = [
    "",
    `Kubemend is running (ready in ${(elapsedMs / 1000).toFixed(1)} s)`,
    "",
    `  console   ${stack.console.url}  (open it in a browser; sign in by picking a persona)`,
    `  gateway   ${stack.gateway.url}  (MCP ${stack.gateway.url}/mcp, A2A ${stack.gateway.url}/a2a/invoke, status ${stack.gateway.url}/a2a/status)`,
    `            health ${stack.gateway.healthUrl}/readyz  metrics ${stack.gateway.metricsUrl}/metrics`,
    `  agent     ${stack.agent.url}  (REST /api/v1/incident/…, MCP /api/v1/mcp)`,
    `  storage   ${stack.storage.url}  (OpenAPI ${stack.storage.url}/api/v1/openapi.json)`,
    `  signals   ${stack.signals.url}  (Alertmanager webhook ${stack.signals.url}/api/v1/signals/prometheus; token serviceTokens.alertmanager)`,
    `  cluster   ${stack.kube.url}  (dev Kubernetes API; kubeconfigs in .local/*.kubeconfig)`,
    `  issuer    ${stack.issuer.url}  (mint a token: curl -s -XPOST ${stack.issuer.url}/dev/token -d '{"preferred_username":"me","groups":["kubemend-sre"]}')`,
    `  model     ${stack.llm.provider} ${stack.llm.model} at ${stack.llm.url}`,
    `  notices   ${stack.notifications.deliveriesUrl}  (what the notification controller delivered: curl -s …)`,
    "",
    "Tokens (1 h; all of them are in .local/stack.json):",
    ...Object.entries(stack.tokens).map(([persona, token]) => `  ${persona.padEnd(22)} ${token}`),
    "",
    "MCP client configuration (the sre persona):",
    JSON.stringify(mcpConfig, null, 2),
    "",
    `The APIs serve HTTPS with certificates from the devkit CA ${stack.tls.caFile}: trust it in the client`,
    `(Node-based clients: NODE_EXTRA_CA_CERTS=${stack.tls.caFile}; curl: --cacert ${stack.tls.caFile}).`,
    "",
    `The platform CR ${stack.namespace}/kubemend is still reconciling (Validating, Migrating, Deploying); the services`,
    "above already answer, and a line follows when the CR reaches Running.",
    "Ctrl-C drains and stops everything.",
    ""
  ]
  process.stdout.write(lines.join("\n"))
}

/**
 * Prints one line when the platform CR's phase reads Running (`phase` is read every second), for as long as the
 * enclosing scope lives.
 */
export const reportWhenRunning = (phase: () => string | undefined, name: string, readyAt: number) =>
  Effect.sync(phase).pipe(
    Effect.repeat({ schedule: Schedule.spaced(Duration.seconds(1)), until: (p) => p === "Running" }),
    Effect.flatMap(() =>
      Effect.sync(() => process.stdout.write(`\nkubemend: platform CR ${name} is Running (${((Date.now() - readyAt) / 1000).toFixed(1)} s after ready)\n`))
    ),
    Effect.forkScoped
  )

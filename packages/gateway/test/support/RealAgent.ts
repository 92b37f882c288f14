/**
 * The real investigation agent (its HTTP server from `@kubemend/agent`: REST contract and interactive MCP) serving
 * on loopback against the test's dev API server, with its own scripted model. Tests that need the agent's real
 * session semantics (an interactive session stays `active` after its analysis answered; leases; follow) use this
 * instead of a fake.
 */
import { HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { ConfigProvider, Context, Duration, Effect, Layer } from "effect"
import { Audit } from "@kubemend/core/Audit"
import { type Script, ScriptedLlm, layerScripted } from "@kubemend/devkit/ScriptedLlm"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { ServerConfig } from "@kubemend/core/Servers"
import { Storage } from "@kubemend/core/Storage"
import { MetricsLive, ServerLive } from "@kubemend/agent/Service"
import { AgentConfig } from "@kubemend/agent/AgentConfig"
import { AlignmentLlm } from "@kubemend/agent/Investigation/Alignment"
import { Infra } from "./Harness.ts"
import { namespace } from "./Seed.ts"

/** An investigation of the seeded checkout Deployment: one tool call, then the root cause. */
export const checkoutRca = "The checkout pods are OOMKilled."
export const checkoutScripts: ReadonlyArray<Script> = [{
  name: "opening",
  turns: [
    {
      text: "Reading the deployment.",
      toolCalls: [{ name: "cluster_get", arguments: { kind: "Deployment", api_version: "apps/v1", name: "checkout", namespace: "demo" } }]
    },
    { text: checkoutRca }
  ]
}]

export interface RealAgentOptions {
  readonly scripts: ReadonlyArray<Script>
  /** Delay of every model answer (so an analysis outlives the call that started it). */
  readonly latencyMs?: number
  /** How long a `start` waits for the opening analysis (the agent's `interactive.startWait`). */
  readonly startWait?: Duration.Duration
}

export const startRealAgent = (options: RealAgentOptions) =>
  Effect.gen(function* () {
    const { issuer, kube } = yield* Infra
    // The gateway's ServiceAccount may read the REST API (as the operator's `agent-client` binding grants).
    const restToken = kube.registerServiceAccountToken(namespace, "kubemend-gateway")
    kube.seed([
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "test-agent-client" },
        rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-agent"] }]
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "test-agent-client-gateway" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-agent-client" },
        subjects: [{ kind: "ServiceAccount", name: "kubemend-gateway", namespace }]
      }
    ])
    // The agent believes the acting user from the caller's JWT, so it trusts the test issuer (`interactive.jwtProviders`).
    const interactiveAuth = Layer.setConfigProvider(ConfigProvider.fromJson({
      interactive: { jwtProviders: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }], allowInsecureIssuers: true }
    }))
    const agent = ServerLive.pipe(
      Layer.provideMerge(Storage.layerMemory()),
      Layer.provideMerge(AlignmentLlm.fromMain),
      Layer.provideMerge(layerScripted({ scripts: options.scripts, ...(options.latencyMs === undefined ? {} : { latencyMs: options.latencyMs }) })),
      Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() })),
      Layer.provideMerge(Audit.layerRecording),
      Layer.provideMerge(AgentConfig.layer({
        interactive: {
          ...AgentConfig.defaults.interactive,
          enabled: true,
          ...(options.startWait === undefined ? {} : { startWait: options.startWait })
        }
      })),
      Layer.provideMerge(ServerConfig.layer({ drainTimeout: Duration.seconds(1) })),
      Layer.provideMerge(MetricsLive),
      Layer.provideMerge(NodeHttpClient.layerUndici),
      Layer.provideMerge(NodeContext.layer),
      Layer.provide(interactiveAuth)
    )
    const ctx = yield* Layer.build(agent).pipe(Effect.orDie)
    const address = Context.get(ctx, HttpServer.HttpServer).address
    return {
      url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`,
      llm: Context.get(ctx, ScriptedLlm),
      /** A token the REST API admits (the gateway's ServiceAccount). */
      restToken
    }
  })

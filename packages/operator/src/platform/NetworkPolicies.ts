/**
 * Network policies of the platform namespace when `networkPolicies.enabled`: default-deny ingress, then the paths
 * between services (gateway -> agent, gateway/agent/migration -> storage, console -> gateway, and the operator's
 * lifecycle controllers -> agent, storage and the policy engine, from whichever namespace the operator runs in), scraping from the
 * monitoring namespace, outside traffic to the gateway from `gatewayIngressNamespaces` (any namespace when unset),
 * and the pods' egress: DNS, the API server (`apiServerCIDR`, else the discovered endpoint addresses), PostgreSQL,
 * Valkey (storage's dead-letter queue, the gateway's shared state), monitoring and HTTPS.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { opaPodSelector, opaPort } from "./Opa.ts"
import { apiPorts, consolePort, metricsPort, ownerLabels, ownerReference, podSelector, type ServiceName } from "./Names.ts"

export interface NetworkPolicyContext {
  readonly cr: KubeObject
  readonly apiGroup: string
  /** API server addresses found in the cluster (`default/kubernetes` endpoints), used when no CIDR is configured. */
  readonly discoveredApiServer: ReadonlyArray<{ readonly cidr: string; readonly port: number }>
}

const nsSelector = (names: ReadonlyArray<string>) => ({
  namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...names] }] }
})

/** Names of every policy this module may render (the reconciler deletes the ones no longer wanted). */
export const networkPolicyNames = [
  "kubemend-default-deny-ingress",
  "kubemend-gateway-ingress",
  "kubemend-agent-ingress",
  "kubemend-storage-ingress",
  "kubemend-opa-ingress",
  "kubemend-console-ingress",
  "kubemend-metrics-ingress",
  "kubemend-egress"
] as const

export const renderNetworkPolicies = (spec: PlatformSpec, ctx: NetworkPolicyContext): ReadonlyArray<KubeObject> => {
  const np = spec.networkPolicies
  if (!np.enabled) return []
  const ns = ctx.cr.metadata.namespace ?? ""
  const instance = ctx.cr.metadata.name
  const pods = (svc: ServiceName | "console") => ({ podSelector: { matchLabels: podSelector(svc, instance) } })
  const policy = (name: string, body: Record<string, unknown>): KubeObject => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace: ns, labels: ownerLabels(ctx.apiGroup, ns, instance), ownerReferences: [ownerReference(ctx.cr)] },
    spec: body
  })
  const tcp = (port: number) => ({ protocol: "TCP", port })
  // The operator's pod (deploy/operator/operator.yaml) drives the agent's REST API and audits to storage.
  const operatorPods = { namespaceSelector: {}, podSelector: { matchLabels: { "app.kubernetes.io/name": "kubemend-operator" } } }
  const platformPods = { podSelector: { matchLabels: { "app.kubernetes.io/instance": instance } } }
  const ingressFrom = np.gatewayIngressNamespaces === undefined || np.gatewayIngressNamespaces.length === 0
    ? [{ namespaceSelector: {} }]
    : [nsSelector(np.gatewayIngressNamespaces), pods("console")]
  const apiServer = np.apiServerCIDR !== undefined
    ? [{ to: [{ ipBlock: { cidr: np.apiServerCIDR } }], ports: [tcp(443), tcp(6443)] }]
    : ctx.discoveredApiServer.length > 0
    ? [{ to: ctx.discoveredApiServer.map((a) => ({ ipBlock: { cidr: a.cidr } })), ports: [...new Set(ctx.discoveredApiServer.map((a) => a.port))].map(tcp) }]
    : [{ ports: [tcp(443), tcp(6443)] }]
  return [
    policy("kubemend-default-deny-ingress", { podSelector: {}, policyTypes: ["Ingress"] }),
    policy("kubemend-gateway-ingress", {
      ...pods("gateway"),
      policyTypes: ["Ingress"],
      ingress: [{ from: ingressFrom, ports: [tcp(apiPorts.gateway)] }]
    }),
    policy("kubemend-agent-ingress", {
      ...pods("agent"),
      policyTypes: ["Ingress"],
      ingress: [{ from: [pods("gateway"), operatorPods], ports: [tcp(apiPorts.agent)] }]
    }),
    policy("kubemend-storage-ingress", {
      ...pods("storage"),
      policyTypes: ["Ingress"],
      ingress: [{ from: [pods("gateway"), pods("agent"), operatorPods], ports: [tcp(apiPorts.storage)] }]
    }),
    // The policy engine takes policies and evaluations from the operator only.
    policy("kubemend-opa-ingress", {
      podSelector: { matchLabels: opaPodSelector(instance) },
      policyTypes: ["Ingress"],
      ingress: [{ from: [operatorPods], ports: [tcp(opaPort)] }]
    }),
    ...(spec.console.enabled
      ? [policy("kubemend-console-ingress", { ...pods("console"), policyTypes: ["Ingress"], ingress: [{ ports: [tcp(consolePort)] }] })]
      : []),
    ...(np.monitoringNamespace === undefined ? [] : [policy("kubemend-metrics-ingress", {
      ...platformPods,
      policyTypes: ["Ingress"],
      ingress: [{ from: [nsSelector([np.monitoringNamespace])], ports: [tcp(metricsPort)] }]
    })]),
    // Egress: DNS, the API server, the other platform pods, PostgreSQL, Valkey, the monitoring backends and HTTPS
    // (LLM providers, token issuers). Nothing else leaves the platform's pods.
    policy("kubemend-egress", {
      ...platformPods,
      policyTypes: ["Egress"],
      egress: [
        { ports: [{ protocol: "UDP", port: 53 }, tcp(53)] },
        ...apiServer,
        { to: [platformPods] },
        { ports: [tcp(spec.postgresql.port), tcp(spec.valkey.port), tcp(443), tcp(9091), tcp(9094)] }
      ]
    })
  ]
}

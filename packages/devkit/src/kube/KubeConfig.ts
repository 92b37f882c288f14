/** A kubeconfig for the dev server that `KubeConfig.loadFromString` (client-node) and kubectl accept. */
import * as YAML from "yaml"

export interface KubeConfigOptions {
  /** Bearer token to send (any token is accepted; registered ones have an identity). Defaults to "devkube-admin". */
  readonly token?: string
  /** Namespace of the context. Defaults to "default". */
  readonly namespace?: string
  /** Context, cluster and user name. Defaults to "devkube". */
  readonly name?: string
}

export const kubeConfigYaml = (url: string, caPem: string | undefined, options: KubeConfigOptions = {}): string => {
  const name = options.name ?? "devkube"
  return YAML.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name,
      cluster: caPem === undefined
        ? { server: url, "insecure-skip-tls-verify": true }
        : { server: url, "certificate-authority-data": Buffer.from(caPem).toString("base64") }
    }],
    users: [{ name, user: { token: options.token ?? "devkube-admin" } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: options.namespace ?? "default" } }],
    "current-context": name,
    preferences: {}
  })
}

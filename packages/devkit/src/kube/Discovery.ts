/** Discovery documents (`/api`, `/apis`, group and group-version resource lists) so REST mappers work. */
import { groupVersion, type ResourceRegistry, type ResourceType } from "./Resources.ts"

const versionRef = (group: string, version: string) => ({ groupVersion: groupVersion({ group, version }), version })

export const apiVersions = (serverAddress: string) => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }]
})

const apiGroup = (name: string, versions: ReadonlyArray<string>) => ({
  name,
  versions: versions.map((v) => versionRef(name, v)),
  preferredVersion: versionRef(name, versions[0]!)
})

export const apiGroupList = (registry: ResourceRegistry) => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: registry
    .groupVersions()
    .filter((g) => g.group !== "")
    .map((g) => apiGroup(g.group, g.versions))
})

export const apiGroupDocument = (registry: ResourceRegistry, group: string) => {
  const found = registry.groupVersions().find((g) => g.group === group && group !== "")
  return found === undefined ? undefined : { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, found.versions) }
}

const resourceEntry = (rt: ResourceType) => ({
  name: rt.plural,
  singularName: rt.singular,
  namespaced: rt.namespaced,
  kind: rt.kind,
  verbs: rt.verbs,
  ...(rt.shortNames.length === 0 ? {} : { shortNames: rt.shortNames })
})

const statusEntry = (rt: ResourceType) => ({
  name: `${rt.plural}/status`,
  singularName: "",
  namespaced: rt.namespaced,
  kind: rt.kind,
  verbs: ["get", "patch", "update"]
})

export const apiResourceList = (registry: ResourceRegistry, group: string, version: string) => {
  const types = registry.all().filter((t) => t.group === group && t.version === version)
  if (types.length === 0) return undefined
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: groupVersion({ group, version }),
    resources: types.flatMap((t) => (t.statusSubresource ? [resourceEntry(t), statusEntry(t)] : [resourceEntry(t)]))
  }
}

export const versionInfo = {
  major: "1",
  minor: "31",
  gitVersion: "v1.31.0-devkube",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2024-08-13T00:00:00Z",
  goVersion: "go1.22.5",
  compiler: "gc",
  platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`
}

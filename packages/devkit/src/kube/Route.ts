/** Request paths -> what they address, and the Kubernetes verb of a request. */

export type Route =
  | { readonly type: "version" }
  | { readonly type: "api" }
  | { readonly type: "apis" }
  | { readonly type: "group"; readonly group: string }
  | { readonly type: "resources"; readonly group: string; readonly version: string }
  | {
    readonly type: "resource"
    readonly group: string
    readonly version: string
    readonly plural: string
    readonly namespace?: string
    readonly name?: string
    readonly subresource?: string
    /** Legacy `/watch/` path prefix. */
    readonly watchPath: boolean
  }
  | { readonly type: "unknown" }

/**
 * `isPlural(group, version, segment)` tells `/api/v1/namespaces/x/status` (a namespace's subresource) from
 * `/api/v1/namespaces/x/pods` (pods in namespace x).
 */
export const parseRoute = (
  pathname: string,
  isPlural: (group: string, version: string, segment: string) => boolean
): Route => {
  const segs = pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
  if (segs[0] === "version" && segs.length === 1) return { type: "version" }
  let group: string
  let version: string
  let rest: Array<string>
  if (segs[0] === "api") {
    if (segs.length === 1) return { type: "api" }
    group = ""
    version = segs[1]!
    rest = segs.slice(2)
  } else if (segs[0] === "apis") {
    if (segs.length === 1) return { type: "apis" }
    if (segs.length === 2) return { type: "group", group: segs[1]! }
    group = segs[1]!
    version = segs[2]!
    rest = segs.slice(3)
  } else return { type: "unknown" }
  if (rest.length === 0) return { type: "resources", group, version }
  const watchPath = rest[0] === "watch"
  if (watchPath) rest = rest.slice(1)
  const scoped = rest[0] === "namespaces" && rest.length >= 3 && (rest.length > 3 || isPlural(group, version, rest[2]!))
  const [plural, name, subresource] = scoped ? rest.slice(2) : rest
  if (plural === undefined || (scoped ? rest.length > 5 : rest.length > 3)) return { type: "unknown" }
  return {
    type: "resource",
    group,
    version,
    plural,
    ...(scoped ? { namespace: rest[1]! } : {}),
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
    watchPath
  }
}

export const verbOf = (method: string, hasName: boolean, watch: boolean): string => {
  switch (method) {
    case "GET":
    case "HEAD":
      return watch ? "watch" : hasName ? "get" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return hasName ? "delete" : "deletecollection"
    default:
      return method.toLowerCase()
  }
}

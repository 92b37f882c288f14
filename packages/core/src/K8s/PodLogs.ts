/**
 * Container logs as the API server answers `GET /api/v1/namespaces/<ns>/pods/<name>/log`, for the two servers that
 * are not a kubelet: the dev API server and the in-memory layer. Logs are set by tests and seeds (a real cluster's
 * come from the kubelet); the answers follow the API server's: the one container is the default, several need
 * `container`, `previous` without a terminated container is a 400, `tailLines` and `limitBytes` cut the text.
 * Lines have no timestamps here, so `sinceSeconds` is accepted and does not filter.
 */

export interface PodLogQuery {
  readonly container?: string
  readonly previous?: boolean
  readonly tailLines?: number
  readonly sinceSeconds?: number
  readonly limitBytes?: number
}

export type PodLogAnswer =
  | { readonly _tag: "Log"; readonly text: string }
  | { readonly _tag: "Failure"; readonly status: 400 | 404; readonly message: string }

interface PodShape {
  readonly metadata: { readonly name: string }
  readonly spec?: unknown
}

const containersOf = (pod: PodShape): ReadonlyArray<string> => {
  const list = (pod.spec as { containers?: ReadonlyArray<{ name?: unknown }> } | undefined)?.containers ?? []
  return list.flatMap((c) => (typeof c.name === "string" ? [c.name] : []))
}

/** Keeps the last `tailLines` lines, then at most `limitBytes` bytes from the start, as the kubelet does. */
export const cutLog = (text: string, query: Pick<PodLogQuery, "tailLines" | "limitBytes">): string => {
  let out = text
  if (query.tailLines !== undefined && query.tailLines >= 0) {
    const lines = out.endsWith("\n") ? out.slice(0, -1).split("\n") : out.split("\n")
    out = query.tailLines === 0 ? "" : lines.slice(-query.tailLines).join("\n") + (out.endsWith("\n") ? "\n" : "")
  }
  if (query.limitBytes !== undefined && query.limitBytes > 0) {
    const bytes = Buffer.from(out, "utf8")
    if (bytes.length > query.limitBytes) out = bytes.subarray(0, query.limitBytes).toString("utf8")
  }
  return out
}

export class PodLogBook {
  private readonly logs = new Map<string, string>()

  private key(namespace: string, pod: string, container: string, previous: boolean) {
    return `${namespace}/${pod}/${container}/${previous ? "previous" : "current"}`
  }

  /** Sets the current (or the previous, terminated) container's log. */
  set(namespace: string, pod: string, container: string, text: string, previous = false): void {
    this.logs.set(this.key(namespace, pod, container, previous), text)
  }

  read(namespace: string, name: string, pod: PodShape | undefined, query: PodLogQuery): PodLogAnswer {
    if (pod === undefined) return { _tag: "Failure", status: 404, message: `pods "${name}" not found` }
    const containers = containersOf(pod)
    let container = query.container
    if (container === undefined || container === "") {
      if (containers.length !== 1) {
        return {
          _tag: "Failure",
          status: 400,
          message: `a container name must be specified for pod ${name}, choose one of: [${containers.join(" ")}]`
        }
      }
      container = containers[0]!
    } else if (!containers.includes(container)) {
      return { _tag: "Failure", status: 400, message: `container ${container} is not valid for pod ${name}` }
    }
    const text = this.logs.get(this.key(namespace, name, container, query.previous === true))
    if (text === undefined && query.previous === true) {
      return { _tag: "Failure", status: 400, message: `previous terminated container "${container}" in pod "${name}" not found` }
    }
    return { _tag: "Log", text: cutLog(text ?? "", query) }
  }
}

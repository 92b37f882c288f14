/** The REST verbs on a resource route: get, list, watch, create, update, patch, delete, deletecollection, reviews. */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as YAML from "yaml"
import type { Objects } from "./Objects.ts"
import { jsonPatch, mergePatch } from "./Patch.ts"
import type { Authorizer } from "./Rbac.ts"
import { groupVersion, isReview, type ResourceType, storageKey } from "./Resources.ts"
import { subjectAccessReview, tokenReview, type Tokens } from "./Reviews.ts"
import type { Route } from "./Route.ts"
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from "./Selectors.ts"
import { ApiError, badRequest, methodNotAllowed, notFound, unsupportedMediaType } from "./Status.ts"
import type { Obj } from "./Store.ts"
import type { WatchHub } from "./Watch.ts"

export type ResourceRoute = Extract<Route, { type: "resource" }>

/** A reply the server writes as JSON; `undefined` means the handler already streamed its answer (watch). */
export type Reply = { readonly status: number; readonly body: unknown } | undefined

const pageKey = (o: Obj) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`

export const parseJson = (raw: string): unknown => {
  try {
    return JSON.parse(raw === "" ? "{}" : raw)
  } catch (e) {
    throw badRequest(`the body of the request could not be decoded: ${(e as Error).message}`)
  }
}

const resourceNotFound = () => new ApiError(404, "NotFound", "the server could not find the requested resource")

export class ResourceApi {
  constructor(
    private readonly objects: Objects,
    private readonly authorizer: Authorizer,
    private readonly tokens: Tokens,
    private readonly watches: WatchHub
  ) {}

  handle(
    rt: ResourceType,
    route: ResourceRoute,
    verb: string,
    query: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
    raw: string
  ): Reply {
    if (route.subresource !== undefined && !(route.subresource === "status" && rt.statusSubresource)) throw resourceNotFound()
    if (!rt.namespaced && route.namespace !== undefined) throw resourceNotFound()
    // Namespaced kinds are only listed and watched across namespaces; everything else needs one in the path.
    if (rt.namespaced && route.namespace === undefined && verb !== "list" && verb !== "watch") {
      throw route.name === undefined ? methodNotAllowed(req.method ?? verb) : resourceNotFound()
    }
    if (isReview(rt)) return this.review(rt, route, verb, raw)
    if (!rt.verbs.includes(verb)) throw methodNotAllowed(req.method ?? verb)
    if (query.has("dryRun")) throw badRequest("dryRun is not supported by the dev API server")
    const ns = route.namespace
    const name = route.name ?? ""
    const status = route.subresource === "status"
    switch (verb) {
      case "get":
        return { status: 200, body: this.objects.get(rt, ns, name) }
      case "list":
        return { status: 200, body: this.list(rt, ns, query) }
      case "watch":
        this.watches.serve(res, {
          rt,
          ...(ns === undefined ? {} : { namespace: ns }),
          labels: parseLabelSelector(query.get("labelSelector") ?? undefined),
          fields: parseFieldSelector(query.get("fieldSelector") ?? undefined, rt.selectableFields, rt.kind),
          ...(query.has("resourceVersion") ? { resourceVersion: query.get("resourceVersion")! } : {}),
          ...(query.has("timeoutSeconds") ? { timeoutSeconds: Number(query.get("timeoutSeconds")) } : {}),
          allowBookmarks: query.get("allowWatchBookmarks") === "true"
        })
        return undefined
      case "create":
        if (status) throw methodNotAllowed("POST")
        return { status: 201, body: this.objects.create(rt, ns, parseJson(raw)) }
      case "update": {
        const current = this.objects.find(rt, ns, name)
        if (current === undefined) throw notFound(rt, name)
        return { status: 200, body: this.objects.replace(rt, current, parseJson(raw), { status }) }
      }
      case "patch":
        return this.patch(rt, route, query, req.headers["content-type"] ?? "", raw)
      case "delete": {
        const options = raw === "" ? {} : (parseJson(raw) as { preconditions?: { uid?: string; resourceVersion?: string } })
        return { status: 200, body: this.objects.delete(rt, ns, name, options.preconditions).object }
      }
      case "deletecollection": {
        const items = this.selected(rt, ns, query).map((o) => this.objects.delete(rt, ns ?? o.metadata.namespace, o.metadata.name).object)
        return { status: 200, body: this.listBody(rt, items) }
      }
      default:
        throw methodNotAllowed(req.method ?? verb)
    }
  }

  private selected(rt: ResourceType, ns: string | undefined, query: URLSearchParams): Array<Obj> {
    const labels = parseLabelSelector(query.get("labelSelector") ?? undefined)
    const fields = parseFieldSelector(query.get("fieldSelector") ?? undefined, rt.selectableFields, rt.kind)
    return this.objects.store
      .list(storageKey(rt), rt.namespaced ? ns : undefined, (o) => matchLabels(labels, o.metadata.labels) && matchFields(fields, o))
  }

  private listBody(rt: ResourceType, items: ReadonlyArray<Obj>, extra: Record<string, unknown> = {}) {
    return {
      apiVersion: groupVersion(rt),
      kind: `${rt.kind}List`,
      metadata: { resourceVersion: String(this.objects.store.resourceVersion), ...extra },
      items: items.map((o) => {
        const { apiVersion: _a, kind: _k, ...rest } = o
        return rt.custom ? this.objects.present(rt, o) : rest
      })
    }
  }

  /** Lists honour `limit` and `continue` (the token is the last key served). */
  private list(rt: ResourceType, ns: string | undefined, query: URLSearchParams) {
    let items = this.selected(rt, ns, query)
    const token = query.get("continue")
    if (token) {
      const after = Buffer.from(token, "base64url").toString()
      items = items.filter((o) => pageKey(o) > after)
    }
    const limit = Number(query.get("limit") ?? 0)
    if (limit > 0 && items.length > limit) {
      const page = items.slice(0, limit)
      return this.listBody(rt, page, {
        continue: Buffer.from(pageKey(page[page.length - 1]!)).toString("base64url"),
        remainingItemCount: items.length - limit
      })
    }
    return this.listBody(rt, items)
  }

  private patch(rt: ResourceType, route: ResourceRoute, query: URLSearchParams, contentType: string, raw: string): Reply {
    const type = contentType.split(";")[0]!.trim().toLowerCase()
    const name = route.name ?? ""
    const status = route.subresource === "status"
    const found = this.objects.find(rt, route.namespace, name)
    const current = found === undefined ? undefined : this.objects.present(rt, found)
    if (type === "application/apply-patch+yaml") {
      // Server-side apply, simplified: the applied configuration is merge-patched onto the live object (no
      // managedFields, no field ownership conflicts); a missing object is created.
      if (!query.get("fieldManager")) throw badRequest("fieldManager is required for apply requests")
      let applied: unknown
      try {
        applied = YAML.parse(raw)
      } catch (e) {
        throw badRequest(`the body of the request could not be decoded: ${(e as Error).message}`)
      }
      if (current === undefined) {
        if (status) throw notFound(rt, name)
        const body = mergePatch({ metadata: { name } }, applied)
        return { status: 201, body: this.objects.create(rt, route.namespace, body) }
      }
      return { status: 200, body: this.objects.replace(rt, current, mergePatch(current, applied), { status }) }
    }
    if (current === undefined) throw notFound(rt, name)
    const patch = parseJson(raw)
    let next: unknown
    if (type === "application/merge-patch+json" || type === "application/strategic-merge-patch+json") {
      // Strategic merge patch is treated as a JSON merge patch (no patchMergeKey list merging).
      next = mergePatch(current, patch)
    } else if (type === "application/json-patch+json") next = jsonPatch(current, patch)
    else throw unsupportedMediaType(type)
    return { status: 200, body: this.objects.replace(rt, current, next, { status }) }
  }

  private review(rt: ResourceType, route: ResourceRoute, verb: string, raw: string): Reply {
    if (verb !== "create" || route.name !== undefined) throw methodNotAllowed(verb)
    const body = parseJson(raw)
    switch (rt.plural) {
      case "subjectaccessreviews":
        return { status: 201, body: subjectAccessReview(this.authorizer, body) }
      case "localsubjectaccessreviews":
        if (route.namespace === undefined) throw resourceNotFound()
        return { status: 201, body: subjectAccessReview(this.authorizer, body, route.namespace) }
      case "tokenreviews":
        return { status: 201, body: tokenReview(this.tokens, body) }
      default:
        throw resourceNotFound()
    }
  }
}

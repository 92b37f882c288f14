/** `metav1.Status` failures as the real API server writes them, thrown inside the server and written by the router. */
import { groupResource, type ResourceType } from "./Resources.ts"

export interface StatusCause {
  readonly reason: string
  readonly message: string
  readonly field: string
}

export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly uid?: string
  readonly causes?: ReadonlyArray<StatusCause>
  readonly retryAfterSeconds?: number
}

export interface StatusObject {
  readonly kind: "Status"
  readonly apiVersion: "v1"
  readonly metadata: Record<string, never>
  readonly status: "Failure" | "Success"
  readonly message?: string
  readonly reason?: string
  readonly details?: StatusDetails
  readonly code: number
}

const reasons: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout"
}

export const reasonFor = (code: number): string => reasons[code] ?? "Unknown"

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails
  ) {
    super(message)
  }

  toStatus(): StatusObject {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      reason: this.reason,
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code
    }
  }
}

const target = (rt: ResourceType, name: string): StatusDetails => ({ name, group: rt.group, kind: rt.plural })

export const notFound = (rt: ResourceType, name: string) => new ApiError(404, "NotFound", `${groupResource(rt)} "${name}" not found`, target(rt, name))

export const alreadyExists = (rt: ResourceType, name: string) =>
  new ApiError(409, "AlreadyExists", `${groupResource(rt)} "${name}" already exists`, target(rt, name))

export const conflict = (rt: ResourceType, name: string) =>
  new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${groupResource(rt)} "${name}": the object has been modified; ` +
      "please apply your changes to the latest version and try again",
    target(rt, name)
  )

export const invalid = (rt: ResourceType, name: string, causes: ReadonlyArray<StatusCause>) => {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(", ")
  const group = rt.group === "" ? "" : `.${rt.group}`
  return new ApiError(422, "Invalid", `${rt.kind}${group} "${name}" is invalid: ${summary}`, {
    name,
    group: rt.group,
    kind: rt.kind,
    causes
  })
}

export const badRequest = (message: string) => new ApiError(400, "BadRequest", message)

export const methodNotAllowed = (method: string) =>
  new ApiError(405, "MethodNotAllowed", `the server does not allow this method on the requested resource: ${method}`)

export const gone = (message: string) => new ApiError(410, "Expired", message)

export const unsupportedMediaType = (type: string) =>
  new ApiError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${type})`
  )

/** The failure a fault injects; 429 carries retryAfterSeconds like the real server's priority-and-fairness answer. */
export const injected = (code: number, message?: string, retryAfterSeconds?: number) =>
  new ApiError(
    code,
    reasonFor(code),
    message ?? `injected fault (${code})`,
    retryAfterSeconds === undefined ? undefined : { retryAfterSeconds }
  )

export const successStatus = (rt: ResourceType, name: string, uid?: string) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  details: { name, group: rt.group, kind: rt.plural, ...(uid === undefined ? {} : { uid }) }
})

/** `GET /api/v1/namespaces/<ns>/pods/<name>/log`: container logs from the server's log book, as text/plain. */
import type { ServerResponse } from "node:http"
import type { PodLogAnswer, PodLogQuery } from "@kubemend/core/K8s/PodLogs"
import { ApiError } from "./Status.ts"

const int = (v: string | null): number | undefined => {
  if (v === null || v === "") return undefined
  const n = Number(v)
  return Number.isInteger(n) ? n : undefined
}

/** The query parameters the API server reads for logs (`follow` and `timestamps` are not served here). */
export const logQuery = (params: URLSearchParams): PodLogQuery => {
  const container = params.get("container")
  const tailLines = int(params.get("tailLines"))
  const sinceSeconds = int(params.get("sinceSeconds"))
  const limitBytes = int(params.get("limitBytes"))
  return {
    ...(container === null ? {} : { container }),
    ...(params.get("previous") === "true" ? { previous: true } : {}),
    ...(tailLines === undefined ? {} : { tailLines }),
    ...(sinceSeconds === undefined ? {} : { sinceSeconds }),
    ...(limitBytes === undefined ? {} : { limitBytes })
  }
}

export const writeLog = (res: ServerResponse, answer: PodLogAnswer) => {
  if (answer._tag === "Failure") {
    throw new ApiError(answer.status, answer.status === 404 ? "NotFound" : "BadRequest", answer.message)
  }
  res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(answer.text) })
  res.end(answer.text)
}

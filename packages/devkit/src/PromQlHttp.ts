/** Prometheus' query endpoints on the dev metrics backend, over the PromQL subset of `PromQl.ts`. */
import type { IncomingMessage, ServerResponse } from "node:http"
import { type DevSeries, instantQuery, PromQlError, rangeQuery } from "./PromQl.ts"

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const time = (v: string | null, fallback: number) => {
  if (v === null || v === "") return fallback
  const n = Number(v)
  return Number.isFinite(n) ? n : Date.parse(v) / 1000
}

/** Answers `/api/v1/query` and `/api/v1/query_range`; false for any other path. */
export const handleQuery = (req: IncomingMessage, res: ServerResponse, series: ReadonlyArray<DevSeries>): boolean => {
  const url = new URL(req.url ?? "/", "http://metrics")
  if (req.method !== "GET" || (url.pathname !== "/api/v1/query" && url.pathname !== "/api/v1/query_range")) return false
  const query = url.searchParams.get("query") ?? ""
  const now = Date.now() / 1000
  try {
    const data = url.pathname === "/api/v1/query"
      ? instantQuery(query, series, time(url.searchParams.get("time"), now), now)
      : rangeQuery(
        query,
        series,
        time(url.searchParams.get("start"), now - 3600),
        time(url.searchParams.get("end"), now),
        Number(url.searchParams.get("step") ?? "60"),
        now
      )
    send(res, 200, { status: "success", data })
  } catch (e) {
    const message = e instanceof PromQlError ? e.message : `invalid query: ${String(e)}`
    send(res, 400, { status: "error", errorType: "bad_data", error: `invalid parameter "query": ${message}` })
  }
  return true
}

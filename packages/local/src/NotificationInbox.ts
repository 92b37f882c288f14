/**
 * Where the local platform's notifications go: a webhook receiver on loopback that keeps the last deliveries, so a
 * person can read what the notification controller really sent (`GET /deliveries`, newest last). The controller
 * delivers to it exactly as to any generic webhook receiver in a cluster.
 */
import { listenScoped } from "@kubemend/devkit/Listen"
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"

export interface Delivery {
  readonly receivedAt: string
  readonly path: string
  readonly signature: string | undefined
  readonly body: unknown
}

const kept = 100
const maxBody = 64 * 1024

const readBody = (req: IncomingMessage) =>
  new Promise<string | undefined>((resolve) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (c: Buffer) => {
      size += c.length
      if (size <= maxBody) chunks.push(c)
    })
    req.on("end", () => resolve(size > maxBody ? undefined : Buffer.concat(chunks).toString("utf8")))
    req.on("error", () => resolve(undefined))
  })

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The receiver for the life of the scope; `url` takes the controller's POSTs, `${url}/deliveries` lists them. */
export const notificationInbox = (port?: number) =>
  Effect.gen(function* () {
    const deliveries: Array<Delivery> = []
    const listening = yield* listenScoped((req, res) => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" })
        res.end(JSON.stringify(body))
      }
      if (req.method === "GET" && req.url === "/deliveries") return answer(200, deliveries)
      if (req.method !== "POST") return answer(405, { error: "POST a notification, or GET /deliveries" })
      void readBody(req).then((text) => {
        if (text === undefined) return answer(413, { error: `body over ${maxBody} bytes` })
        deliveries.push({
          receivedAt: new Date().toISOString(),
          path: req.url ?? "/",
          signature: req.headers["x-kubemend-signature"] as string | undefined,
          body: parsed(text)
        })
        if (deliveries.length > kept) deliveries.shift()
        answer(200, { received: true })
      })
    }, { port })
    return { url: listening.url, deliveriesUrl: `${listening.url}/deliveries` } as const
  })

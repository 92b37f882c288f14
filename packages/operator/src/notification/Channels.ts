/**
 * One delivery attempt per channel, over the channel's own protocol: Slack incoming webhook (Block Kit message),
 * a generic webhook (JSON, `X-Kubemend-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with
 * `X-Kubemend-Timestamp`, so a receiver can check origin and freshness), PagerDuty Events API v2 (`trigger`, dedup key
 * = the request's name) and e-mail over SMTP with nodemailer. A failure says whether trying again can help: network
 * errors, timeouts, 408/429/5xx and SMTP 4xx are transient; other answers are final.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import { Data, Duration, Effect } from "effect"
import { createHmac } from "node:crypto"
import * as Nodemailer from "nodemailer"
import type { Receiver } from "./NotificationConfig.ts"

export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{ readonly retryable: boolean; readonly detail: string }> {}

/** The parts of a NotificationRequest a message is made of. */
export interface Message {
  readonly name: string
  readonly type: string
  readonly priority: string
  readonly subject: string
  readonly body: string
  readonly reason?: string
  readonly remediationRequest?: string
  readonly target?: { readonly kind: string; readonly name: string; readonly namespace?: string }
  readonly requestedAt?: string
}

export const messageOf = (nr: KubeObject): Message => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the CR's spec as stored, fields checked where read
  const spec = (nr.spec ?? {}) as Record<string, any>
  return {
    name: nr.metadata.name,
    type: String(spec["type"] ?? "notification"),
    priority: String(spec["priority"] ?? "medium"),
    subject: String(spec["subject"] ?? nr.metadata.name),
    body: String(spec["body"] ?? ""),
    ...(spec["reason"] === undefined ? {} : { reason: String(spec["reason"]) }),
    ...(spec["remediationRequestRef"]?.name === undefined ? {} : { remediationRequest: String(spec["remediationRequestRef"].name) }),
    ...(spec["target"] === undefined ? {} : { target: spec["target"] }),
    ...(spec["requestedAt"] === undefined ? {} : { requestedAt: String(spec["requestedAt"]) })
  }
}

const targetText = (
  m: Message
) => (m.target === undefined ? "" : `${m.target.kind}/${m.target.name}${m.target.namespace === undefined ? "" : ` in ${m.target.namespace}`}`)

/** Slack incoming-webhook body: `text` for notifications and clients without blocks, blocks for the channel. */
export const slackPayload = (m: Message) => ({
  text: `${m.subject}\n${m.body}`.slice(0, 3000),
  blocks: [
    { type: "header", text: { type: "plain_text", text: m.subject.slice(0, 150) } },
    { type: "section", text: { type: "mrkdwn", text: (m.body === "" ? "_no details_" : m.body).slice(0, 3000) } },
    {
      type: "context",
      elements: [{
        type: "mrkdwn",
        text: [`*${m.type}*`, `priority ${m.priority}`, m.remediationRequest === undefined ? "" : `request ${m.remediationRequest}`, targetText(m)]
          .filter((x) => x !== "").join(" · ")
      }]
    }
  ]
})

const pagerDutySeverity: Record<string, string> = { critical: "critical", high: "error", medium: "warning", low: "info" }

/** PagerDuty Events API v2 `trigger`. */
export const pagerDutyPayload = (m: Message, routingKey: string) => ({
  routing_key: routingKey,
  event_action: "trigger",
  dedup_key: m.name,
  payload: {
    summary: m.subject.slice(0, 1024),
    source: targetText(m) === "" ? "kubemend" : targetText(m),
    severity: pagerDutySeverity[m.priority] ?? "warning",
    ...(m.target === undefined ? {} : { component: `${m.target.kind}/${m.target.name}` }),
    ...(m.target?.namespace === undefined ? {} : { group: m.target.namespace }),
    class: m.type,
    ...(m.requestedAt === undefined ? {} : { timestamp: m.requestedAt }),
    custom_details: {
      body: m.body,
      ...(m.reason === undefined ? {} : { reason: m.reason }),
      ...(m.remediationRequest === undefined ? {} : { remediationRequest: m.remediationRequest })
    }
  }
})

/** `sha256=<hex>` over `<timestamp>.<body>`. */
export const webhookSignature = (secret: string, timestamp: string, body: string) =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`

const transient = (status: number) => status === 408 || status === 429 || status >= 500

const post = (url: string, body: unknown, headers: Record<string, string>, timeout: Duration.Duration) =>
  Effect.tryPromise({
    try: async (signal) => {
      const text = typeof body === "string" ? body : JSON.stringify(body)
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text, signal })
      const answer = (await res.text()).slice(0, 300)
      return { status: res.status, answer }
    },
    catch: (e) => new DeliveryFailed({ retryable: true, detail: `POST failed: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new DeliveryFailed({ retryable: true, detail: `no answer within ${Duration.format(timeout)}` }) }),
    Effect.flatMap(({ answer, status }) =>
      status >= 200 && status < 300
        ? Effect.void
        : Effect.fail(new DeliveryFailed({ retryable: transient(status), detail: `HTTP ${status}${answer === "" ? "" : `: ${answer}`}` }))
    )
  )

/** Credentials a receiver needs, already read from its Secrets. */
export interface Credentials {
  readonly secret?: string
  readonly username?: string
  readonly password?: string
}

const sendMail = (r: Extract<Receiver, { channel: "email" }>, m: Message, c: Credentials, timeout: Duration.Duration) =>
  Effect.tryPromise({
    try: async () => {
      const ms = Duration.toMillis(timeout)
      const transport = Nodemailer.createTransport({
        host: r.host,
        port: r.port,
        secure: r.secure,
        connectionTimeout: ms,
        greetingTimeout: ms,
        socketTimeout: ms,
        ...(c.username === undefined ? {} : { auth: { user: c.username, pass: c.password ?? "" } })
      })
      try {
        await transport.sendMail({
          from: r.from,
          to: [...r.to],
          subject: m.subject,
          text: [
            m.body,
            "",
            `type: ${m.type}`,
            `priority: ${m.priority}`,
            m.remediationRequest === undefined ? "" : `remediation request: ${m.remediationRequest}`,
            targetText(m) === "" ? "" : `target: ${targetText(m)}`
          ].filter((l, i) => i < 2 || l !== "").join("\n"),
          headers: { "X-Kubemend-Notification": m.name }
        })
      } finally {
        transport.close()
      }
    },
    catch: (e) => {
      const code = (e as { responseCode?: number }).responseCode
      // SMTP 5xx is a final answer (bad recipient, refused); 4xx and connection failures are worth another try.
      return new DeliveryFailed({ retryable: code === undefined || code < 500, detail: `SMTP: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500) })
    }
  })

/** One attempt to deliver `m` to `r`. */
export const deliver = (r: Receiver, m: Message, c: Credentials, timeout: Duration.Duration): Effect.Effect<void, DeliveryFailed> => {
  switch (r.channel) {
    case "slack":
      return post(c.secret ?? "", slackPayload(m), {}, timeout)
    case "pagerduty":
      return post(r.url, pagerDutyPayload(m, c.secret ?? ""), {}, timeout)
    case "webhook": {
      const body = JSON.stringify({ kind: "NotificationRequest", ...m })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const headers = c.secret === undefined
        ? {}
        : { "X-Kubemend-Timestamp": timestamp, "X-Kubemend-Signature": webhookSignature(c.secret, timestamp, body) }
      return post(r.url, body, headers, timeout)
    }
    case "email":
      return sendMail(r, m, c, timeout)
  }
}

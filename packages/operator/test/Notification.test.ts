/**
 * Notification delivery against local receivers: webhook servers that fail and recover (HMAC signature checked), a
 * Slack and a PagerDuty endpoint (payload shapes), a real SMTP server (smtp-server) with login, the per-channel
 * breaker opening and closing, and routing by type and severity. NotificationRequests live in the dev API server with
 * the generated CRDs; time (backoff, breaker reset) moves on TestClock while the HTTP and SMTP traffic is real.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Storage } from "@kubemend/core/Storage"
import type { NotificationAudit } from "@kubemend/core/StorageApi"
import { makeMemory } from "@kubemend/core/Storage/Memory"
import { Context, Duration, Effect, Layer, TestClock } from "effect"
import { createHmac } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { renderCrds } from "../src/Crds.ts"
import { Breakers } from "../src/notification/Breakers.ts"
import { NotificationConfig, type NotificationSettings, type Receiver } from "../src/notification/NotificationConfig.ts"
import { NotificationMetrics } from "../src/notification/NotificationMetrics.ts"
import { NotificationReconciler } from "../src/notification/NotificationReconciler.ts"

const apiGroup = "kubemend.io"
const namespace = "kubemend-system"

interface Received {
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** An HTTP receiver answering the scripted statuses in turn (the last one repeats). */
const receiver = (statuses: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; received: Array<Received>; server: Http.Server; script: Array<number> }>((resolve) => {
        const received: Array<Received> = []
        const script = [...statuses]
        const server = Http.createServer((req, res) => {
          let body = ""
          req.on("data", (c) => (body += c))
          req.on("end", () => {
            received.push({ headers: req.headers, body })
            const status = script.length > 1 ? script.shift()! : script[0]!
            res.writeHead(status, { "content-type": "application/json" }).end(status < 300 ? "{\"status\":\"success\"}" : "{\"error\":\"down\"}")
          })
        })
        server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server, script }))
      })
    ),
    (r) => Effect.promise(() => new Promise<void>((done) => r.server.close(() => done())))
  )

const secret = (name: string, data: Record<string, string>) => ({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, stringData: data })

const nr = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "NotificationRequest",
  metadata: { name },
  spec: {
    type: "escalation",
    priority: "critical",
    channel: "ops",
    subject: `Manual review required: ${name}`,
    body: "The investigation asked for a human.",
    reason: "operator_escalation",
    remediationRequestRef: { name: `rr-${name}`, namespace },
    target: { kind: "Deployment", name: "checkout", namespace: "shop" },
    ...spec
  }
})

/** The dev API server, the live K8s/Cluster clients, a recording storage and the reconciler with `settings`. */
const setup = (settings: Partial<NotificationSettings>, objects: ReadonlyArray<unknown> = []) =>
  Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, ...renderCrds(apiGroup), ...objects])
    const records: Array<NotificationAudit> = []
    const storage = Layer.effect(
      Storage,
      Effect.map(makeMemory({}), (s) => ({
        ...s,
        recordNotification: (r: NotificationAudit) => Effect.zipRight(Effect.sync(() => records.push(r)), s.recordNotification(r))
      }))
    )
    const deps = Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }).pipe(Layer.orDie),
      ClusterLive.layer({ apiGroup, kubeconfig: kube.kubeConfig() }),
      NotificationConfig.layer({ backoffBase: Duration.seconds(30), breakerThreshold: 2, breakerResetTimeout: Duration.minutes(1), ...settings }),
      storage,
      Metrics.Default
    )
    const layer = NotificationReconciler.Default.pipe(
      Layer.provideMerge(Breakers.Default),
      Layer.provideMerge(NotificationMetrics.Default),
      Layer.provideMerge(deps)
    )
    const ctx = yield* Layer.build(layer)
    const reconciler = Context.get(ctx, NotificationReconciler)
    const breakers = Context.get(ctx, Breakers)
    const metrics = Context.get(ctx, Metrics)
    const status = (name: string) => (kube.get(`${apiGroup}/v1alpha1`, "NotificationRequest", name, namespace)?.status ?? {}) as Record<string, any>
    const create = (o: ReturnType<typeof nr>) => Effect.sync(() => kube.seed([{ ...o, metadata: { ...o.metadata, namespace } }]))
    const gauge = (name: string, labels: Record<string, string>) =>
      Effect.promise(async () => {
        const m = (await metrics.registers[0]!.getMetricsAsJSON()).find((x) => x.name === name)
        return m?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value
      })
    return { kube, reconcile: (name: string) => reconciler.reconcile(`${namespace}/${name}`), status, create, records, breakers, gauge }
  })

const hook = (name: string, url: string, hmac = true): Receiver => ({
  name,
  channel: "webhook",
  url,
  ...(hmac ? { hmacSecret: { name: "hook-secret", key: "key" } } : {})
})

describe("notification delivery", () => {
  it.scoped("a webhook that fails then recovers: Retrying with backoff, then Sent with a valid signature and an audit record", () =>
    Effect.gen(function* () {
      const target = yield* receiver([503, 503, 200])
      const h = yield* setup({ receivers: [hook("ops", target.url)], defaultReceivers: ["ops"] }, [secret("hook-secret", { key: "s3cret" })])
      yield* h.create(nr("a"))
      const first = yield* h.reconcile("a")
      expect(h.status("a")).toMatchObject({
        phase: "Retrying",
        deliveries: [{ receiver: "ops", status: "Retrying", attempts: 1, lastError: expect.stringContaining("HTTP 503") }]
      })
      expect(first.requeueAfter).toEqual(Duration.seconds(30))
      // Not due yet: nothing is sent.
      yield* h.reconcile("a")
      expect(target.received).toHaveLength(1)
      yield* TestClock.adjust("30 seconds")
      const second = yield* h.reconcile("a")
      expect(second.requeueAfter).toEqual(Duration.minutes(1))
      yield* TestClock.adjust("1 minute")
      yield* h.reconcile("a")
      expect(h.status("a")).toMatchObject({ phase: "Sent", sentAt: expect.any(String), deliveries: [{ status: "Sent", attempts: 3 }] })
      const last = target.received[2]!
      const ts = String(last.headers["x-kubemend-timestamp"])
      expect(last.headers["x-kubemend-signature"]).toBe(`sha256=${createHmac("sha256", "s3cret").update(`${ts}.${last.body}`).digest("hex")}`)
      expect(JSON.parse(last.body)).toMatchObject({ kind: "NotificationRequest", name: "a", type: "escalation", remediationRequest: "rr-a" })
      expect(h.records).toEqual([
        expect.objectContaining({ remediation_id: "rr-a", channel: "webhook", recipient: "ops", status: "sent", escalation_level: 1 })
      ])
      expect(yield* h.gauge("svc_notification_reconciler_active", { phase: "Sent" })).toBe(1)
      expect(yield* h.gauge("svc_notification_delivery_retries_total", { channel: "webhook" })).toBe(2)
      // A final answer is not retried.
      const gone = yield* receiver([410])
      const h2 = yield* setup({ receivers: [hook("ops", gone.url, false)], defaultReceivers: ["ops"] })
      yield* h2.create(nr("b"))
      yield* h2.reconcile("b")
      expect(h2.status("b")).toMatchObject({ phase: "Failed", deliveries: [{ status: "Failed", attempts: 1, lastError: expect.stringContaining("HTTP 410") }] })
      expect(h2.records).toEqual([expect.objectContaining({ status: "failed", error_message: expect.stringContaining("410") })])
    }))

  it.scoped("the channel breaker opens after repeated failures, holds deliveries without attempts, and closes on a good trial", () =>
    Effect.gen(function* () {
      const target = yield* receiver([500])
      const h = yield* setup({ receivers: [hook("ops", target.url, false)], defaultReceivers: ["ops"], maxAttempts: 10 })
      yield* h.create(nr("a"))
      yield* h.create(nr("b"))
      yield* h.reconcile("a")
      yield* h.reconcile("b")
      expect(yield* h.breakers.state("webhook")).toBe("open")
      expect(yield* h.gauge("svc_notification_channel_circuit_breaker_state", { channel: "webhook" })).toBe(1)
      yield* h.create(nr("c"))
      yield* h.reconcile("c")
      expect(target.received).toHaveLength(2)
      expect(h.status("c")).toMatchObject({ phase: "Retrying", deliveries: [{ attempts: 0, lastError: "webhook circuit breaker open" }] })
      target.script.splice(0, target.script.length, 200)
      yield* TestClock.adjust("1 minute")
      yield* h.reconcile("c")
      expect(h.status("c")).toMatchObject({ phase: "Sent" })
      expect(yield* h.breakers.state("webhook")).toBe("closed")
      expect(yield* h.gauge("svc_notification_channel_circuit_breaker_state", { channel: "webhook" })).toBe(0)
      expect(yield* h.gauge("svc_notification_channel_health_score", { channel: "webhook" })).toBeCloseTo(100 / 3)
    }))

  it.scoped("Slack and PagerDuty get their payload shapes, credentials from Secrets; routing by type and severity", () =>
    Effect.gen(function* () {
      const slack = yield* receiver([200])
      const pd = yield* receiver([202])
      const h = yield* setup({
        receivers: [
          { name: "chat", channel: "slack", webhookUrl: { name: "slack", key: "url" } },
          { name: "pager", channel: "pagerduty", routingKey: { name: "pd", key: "routingKey" }, url: pd.url }
        ],
        routes: [
          { types: ["escalation"], severities: ["critical"], receivers: ["pager"], continue: true },
          { types: [], severities: [], receivers: ["chat"], continue: false }
        ]
      }, [secret("slack", { url: slack.url }), secret("pd", { routingKey: "R0UT1NGKEY" })])
      yield* h.create(nr("crit"))
      yield* h.create(nr("approval", { type: "approval", priority: "medium", subject: "Approval waiting: rr-approval" }))
      yield* h.reconcile("crit")
      yield* h.reconcile("approval")
      expect(h.status("crit")).toMatchObject({ phase: "Sent", deliveries: [{ receiver: "pager" }, { receiver: "chat" }] })
      expect(h.status("approval")).toMatchObject({ phase: "Sent", deliveries: [{ receiver: "chat", channel: "slack" }] })
      expect(pd.received).toHaveLength(1)
      expect(JSON.parse(pd.received[0]!.body)).toEqual({
        routing_key: "R0UT1NGKEY",
        event_action: "trigger",
        dedup_key: "crit",
        payload: expect.objectContaining({
          summary: "Manual review required: crit",
          severity: "critical",
          source: "Deployment/checkout in shop",
          component: "Deployment/checkout",
          group: "shop",
          class: "escalation"
        })
      })
      const message = JSON.parse(slack.received[1]!.body)
      expect(message.text).toContain("Approval waiting: rr-approval")
      expect(message.blocks.map((b: any) => b.type)).toEqual(["header", "section", "context"])
      expect(message.blocks[0].text).toEqual({ type: "plain_text", text: "Approval waiting: rr-approval" })
      // Nothing routed: Failed with the reason.
      const none = yield* setup({ receivers: [], routes: [] })
      yield* none.create(nr("x"))
      yield* none.reconcile("x")
      expect(none.status("x")).toMatchObject({ phase: "Failed", message: expect.stringContaining("no receiver") })
    }))

  it.scoped("e-mail through a real SMTP server with login; a refused recipient is final and the request PartiallySent", () =>
    Effect.gen(function* () {
      const mails: Array<{ from: string; to: Array<string>; raw: string; user: string | undefined }> = []
      const smtp = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<SMTPServer & { port: number }>((resolve) => {
            const server = new SMTPServer({
              authOptional: false,
              disabledCommands: ["STARTTLS"],
              onAuth: (
                auth,
                _s,
                cb
              ) => (auth.username === "kubemend" && auth.password === "mail-pass" ? cb(null, { user: auth.username }) : cb(new Error("bad login"))),
              onRcptTo: (
                address,
                _s,
                cb
              ) => (address.address.endsWith("@nowhere.test") ? cb(Object.assign(new Error("no such user"), { responseCode: 550 })) : cb()),
              onData: (stream, session, cb) => {
                let raw = ""
                stream.on("data", (c) => (raw += c))
                stream.on("end", () => {
                  mails.push({
                    from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
                    to: session.envelope.rcptTo.map((r) => r.address),
                    raw,
                    user: session.user as string | undefined
                  })
                  cb()
                })
              }
            })
            server.listen(0, "127.0.0.1", () => resolve(Object.assign(server, { port: (server.server.address() as AddressInfo).port })))
          })
        ),
        (s) => Effect.promise(() => new Promise<void>((done) => s.close(() => done())))
      )
      const ok = yield* receiver([200])
      const mail = (name: string, to: string): Receiver => ({
        name,
        channel: "email",
        host: "127.0.0.1",
        port: smtp.port,
        secure: false,
        from: "kubemend@example.test",
        to: [to],
        authSecret: "smtp"
      })
      const h = yield* setup({
        receivers: [mail("oncall-mail", "oncall@example.test"), mail("bad-mail", "ghost@nowhere.test"), hook("ops", ok.url, false)],
        routes: [{ types: [], severities: [], receivers: ["oncall-mail"], continue: false }]
      }, [secret("smtp", { username: "kubemend", password: "mail-pass" })])
      yield* h.create(nr("m", { channel: "oncall-mail" }))
      yield* h.reconcile("m")
      expect(h.status("m")).toMatchObject({ phase: "Sent", deliveries: [{ receiver: "oncall-mail", channel: "email", status: "Sent" }] })
      expect(mails).toHaveLength(1)
      expect(mails[0]).toMatchObject({ from: "kubemend@example.test", to: ["oncall@example.test"], user: "kubemend" })
      expect(mails[0]!.raw).toContain("Subject: Manual review required: m")
      expect(mails[0]!.raw).toContain("The investigation asked for a human.")

      const partial = yield* setup({
        receivers: [mail("bad-mail", "ghost@nowhere.test"), hook("ops", ok.url, false)],
        routes: [{ types: [], severities: [], receivers: ["bad-mail", "ops"], continue: false }]
      }, [secret("smtp", { username: "kubemend", password: "mail-pass" })])
      yield* partial.create(nr("p"))
      yield* partial.reconcile("p")
      expect(partial.status("p")).toMatchObject({
        phase: "PartiallySent",
        deliveries: [{ receiver: "bad-mail", status: "Failed", lastError: expect.stringContaining("550") }, { receiver: "ops", status: "Sent" }]
      })
    }))
})

/**
 * Delivers a NotificationRequest to the receivers its type and severity route to, one delivery per receiver kept in
 * `status.deliveries`. Phases: `Pending` (not seen yet) -> `Sending` -> `Sent` when every receiver has it,
 * `Retrying` while a transient failure waits for its next attempt (doubling backoff, capped), `PartiallySent` when
 * some receivers got it and the others failed for good, `Failed` when none did (or no receiver is routed). A channel
 * whose breaker is open is not tried; its deliveries wait for the breaker's trial without using an attempt. Each
 * final delivery outcome is recorded in storage's notification audit when storage is configured.
 */
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import { Clock, Duration, Effect, Option } from "effect"
import { Cluster } from "../runtime/Cluster.ts"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { Breakers } from "./Breakers.ts"
import { type Credentials, deliver, type Message, messageOf } from "./Channels.ts"
import { NotificationConfig, type NotificationSettings, type Receiver } from "./NotificationConfig.ts"
import { NotificationMetrics } from "./NotificationMetrics.ts"

export interface Delivery {
  readonly receiver: string
  readonly channel: string
  readonly status: "Pending" | "Sent" | "Retrying" | "Failed"
  readonly attempts: number
  readonly lastAttemptAt?: string
  readonly sentAt?: string
  readonly nextAttemptAt?: string
  readonly lastError?: string
}

const terminal = new Set(["Sent", "PartiallySent", "Failed"])

/** The receivers of a message: matching routes (first match unless `continue`), else the defaults; plus `spec.channel` when it names a receiver. */
export const routeOf = (config: NotificationSettings, m: Message, channel: string | undefined): ReadonlyArray<Receiver> => {
  const names: Array<string> = []
  for (const r of config.routes) {
    if ((r.types.length === 0 || r.types.includes(m.type)) && (r.severities.length === 0 || r.severities.includes(m.priority))) {
      names.push(...r.receivers)
      if (!r.continue) break
    }
  }
  if (names.length === 0) names.push(...config.defaultReceivers)
  if (channel !== undefined && config.receivers.some((r) => r.name === channel)) names.push(channel)
  return [...new Set(names)].flatMap((n) => config.receivers.filter((r) => r.name === n))
}

const phaseOf = (deliveries: ReadonlyArray<Delivery>): string => {
  if (deliveries.length === 0) return "Failed"
  if (deliveries.every((d) => d.status === "Sent")) return "Sent"
  if (deliveries.some((d) => d.status === "Retrying" || d.status === "Pending")) return deliveries.some((d) => d.status === "Retrying") ? "Retrying" : "Sending"
  return deliveries.some((d) => d.status === "Sent") ? "PartiallySent" : "Failed"
}

export class NotificationReconciler extends Effect.Service<NotificationReconciler>()("@kubemend/operator/NotificationReconciler", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const cluster = yield* Cluster
    const config = yield* NotificationConfig
    const breakers = yield* Breakers
    const metrics = yield* NotificationMetrics
    const storage = yield* Effect.serviceOption(Storage)

    const secretValue = (name: string, key: string) =>
      cluster.get({ apiVersion: "v1", kind: "Secret", name, namespace: k8s.namespace }).pipe(
        Effect.map(Option.flatMap((s) => Option.fromNullable((s["data"] as Record<string, string> | undefined)?.[key]))),
        Effect.map(Option.map((b64) => Buffer.from(b64, "base64").toString("utf8").trim()))
      )

    const credentials = (r: Receiver): Effect.Effect<Credentials, string> => {
      const need = (name: string, key: string) =>
        secretValue(name, key).pipe(
          Effect.mapError((e) => `Secret ${name} could not be read: ${e.message}`),
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(`Secret ${name} has no key ${key}`), onSome: Effect.succeed }))
        )
      switch (r.channel) {
        case "slack":
          return Effect.map(need(r.webhookUrl.name, r.webhookUrl.key), (secret) => ({ secret }))
        case "pagerduty":
          return Effect.map(need(r.routingKey.name, r.routingKey.key), (secret) => ({ secret }))
        case "webhook":
          return r.hmacSecret === undefined ? Effect.succeed({}) : Effect.map(need(r.hmacSecret.name, r.hmacSecret.key), (secret) => ({ secret }))
        case "email":
          return r.authSecret === undefined
            ? Effect.succeed({})
            : Effect.all({ username: need(r.authSecret, "username"), password: need(r.authSecret, "password") })
      }
    }

    const audit = (nr: KubeObject, m: Message, r: Receiver, d: Delivery) =>
      Option.match(storage, {
        onNone: () => Effect.logInfo("notification delivery").pipe(Effect.annotateLogs({ receiver: r.name, status: d.status })),
        onSome: (s) =>
          s.recordNotification({
            remediation_id: (m.remediationRequest ?? nr.metadata.name).slice(0, 255),
            notification_id: `${nr.metadata.uid ?? nr.metadata.name}/${r.name}`.slice(0, 255),
            recipient: r.name.slice(0, 500),
            channel: r.channel,
            message_summary: m.subject.slice(0, 1000),
            status: d.status === "Sent" ? "sent" : "failed",
            sent_at: d.sentAt ?? d.lastAttemptAt ?? new Date().toISOString(),
            delivery_status: `${d.status} after ${d.attempts} attempt(s)`,
            ...(d.lastError === undefined ? {} : { error_message: d.lastError.slice(0, 1000) }),
            escalation_level: m.type === "escalation" ? 1 : 0
          }).pipe(Effect.catchAll((e) => e._tag === "Conflict" ? Effect.void : Effect.logWarning("notification audit record not written", e)))
      })

    const backoff = (attempts: number) => Duration.min(Duration.times(config.backoffBase, 2 ** Math.max(0, attempts - 1)), config.backoffMax)

    /** One receiver's turn: skipped until due, held by an open breaker, or one attempt. */
    const step = (nr: KubeObject, m: Message, r: Receiver, d: Delivery, now: number) =>
      Effect.gen(function* () {
        if (d.status === "Sent" || d.status === "Failed") return d
        if (d.nextAttemptAt !== undefined && Date.parse(d.nextAttemptAt) > now) return d
        const at = new Date(now).toISOString()
        const attempts = d.attempts + 1
        const started = yield* Clock.currentTimeMillis
        const outcome = yield* credentials(r).pipe(
          Effect.mapError((detail) => ({ retryable: true, detail })),
          Effect.flatMap((c) => deliver(r, m, c, config.requestTimeout)),
          (delivery) => breakers.run(r.channel, delivery),
          // None: held by the open breaker.
          Effect.asSome,
          Effect.catchTag("DependencyUnavailable", () => Effect.succeedNone),
          Effect.either
        )
        if (outcome._tag === "Right" && Option.isNone(outcome.right)) {
          // No attempt used; due again when the breaker lets its trial through.
          const due = Option.getOrElse(yield* breakers.trialAt(r.channel), () => now + Duration.toMillis(config.breakerResetTimeout))
          return { ...d, status: "Retrying", nextAttemptAt: new Date(due).toISOString(), lastError: `${r.channel} circuit breaker open` } satisfies Delivery
        }
        yield* metrics.attempt(r.channel, outcome._tag === "Right" ? "success" : "failure", ((yield* Clock.currentTimeMillis) - started) / 1000)
        const { nextAttemptAt: _n, lastError: _e, ...rest } = d
        if (outcome._tag === "Right") {
          const sent: Delivery = { ...rest, status: "Sent", attempts, lastAttemptAt: at, sentAt: at }
          yield* audit(nr, m, r, sent)
          return sent
        }
        const { detail, retryable } = outcome.left
        if (retryable && attempts < config.maxAttempts) {
          yield* metrics.retry(r.channel)
          return {
            ...rest,
            status: "Retrying",
            attempts,
            lastAttemptAt: at,
            nextAttemptAt: new Date(now + Duration.toMillis(backoff(attempts))).toISOString(),
            lastError: detail
          } satisfies Delivery
        }
        const failed: Delivery = { ...rest, status: "Failed", attempts, lastAttemptAt: at, lastError: detail }
        yield* audit(nr, m, r, failed)
        return failed
      })

    const reconcile = Effect.fn("NotificationReconciler.reconcile")(function* (key: string) {
      const { name } = splitKey(key)
      // 1. Load the request; a finished one is left alone.
      const found = yield* k8s.getCr("notificationrequests", name).pipe(Effect.option)
      if (Option.isNone(found)) {
        yield* metrics.phase(name, undefined)
        return {} satisfies Reconciled
      }
      const nr = found.value
      const status = (nr.status ?? {}) as { phase?: string; deliveries?: ReadonlyArray<Delivery> }
      if (status.phase !== undefined && terminal.has(status.phase)) {
        yield* metrics.phase(name, status.phase)
        return {} satisfies Reconciled
      }
      // 2. The receivers it routes to, and where each delivery stands.
      const m = messageOf(nr)
      const receivers = routeOf(config, m, (nr.spec as { channel?: string } | undefined)?.channel)
      const now = yield* Clock.currentTimeMillis
      if (receivers.length === 0) {
        yield* k8s.patchCrStatus("notificationrequests", name, {
          phase: "Failed",
          message: `no receiver is routed for type ${m.type} and priority ${m.priority}`
        })
        yield* metrics.phase(name, "Failed")
        return {} satisfies Reconciled
      }
      if (status.phase === undefined || status.phase === "Pending") {
        yield* k8s.patchCrStatus("notificationrequests", name, { phase: "Sending" })
      }
      const previous = new Map((status.deliveries ?? []).map((d) => [d.receiver, d]))
      // 3. One step per receiver, side by side (a slow SMTP server does not hold up Slack).
      const deliveries = yield* Effect.forEach(
        receivers,
        (r) => step(nr, m, r, previous.get(r.name) ?? { receiver: r.name, channel: r.channel, status: "Pending", attempts: 0 }, now),
        { concurrency: "unbounded" }
      )
      // 4. The phase the deliveries add up to.
      const phase = phaseOf(deliveries)
      const sent = deliveries.filter((d) => d.status === "Sent").length
      yield* k8s.patchCrStatus("notificationrequests", name, {
        phase,
        deliveries,
        message: `${sent} of ${deliveries.length} receiver(s) sent`,
        ...(phase === "Sent" || phase === "PartiallySent" ? { sentAt: new Date(now).toISOString() } : {})
      })
      yield* metrics.phase(name, phase)
      const due = deliveries.flatMap((d) => (d.status === "Retrying" && d.nextAttemptAt !== undefined ? [Date.parse(d.nextAttemptAt)] : []))
      return (due.length === 0 ? {} : { requeueAfter: Duration.millis(Math.max(0, Math.min(...due) - now)) }) satisfies Reconciled
    })

    return { reconcile } as const
  })
}) {}

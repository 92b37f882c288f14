/**
 * Blocking cluster tools. `svc_watch` follows an RR's phase until a terminal phase, `AwaitingApproval`, the
 * caller's cancellation or the 15-minute cap (then `status: "timeout"` with the events seen); when the gateway starts
 * draining it answers at once with the events seen and `status: "shutdown"`, so the caller can watch again through
 * another replica without losing them (a watch would rarely end within the drain's grace). `svc_await_session`
 * waits until the RR's AIAnalysis carries `status.investigationSession.id` (default 3 minutes, then a timeout
 * error). Both watch the cluster (list + watch with reconnects in the K8s layer) rather than poll.
 */
import { Chunk, Clock, Deferred, Duration, Effect, identity, Option, Schema, Stream } from "effect"
import type { Shutdown } from "@kubemend/core/Drain"
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { K8s, type KubeObject, type WatchEvent } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayConfig } from "../GatewayConfig.ts"
import { defineTool } from "../Mcp/Tool.ts"
import { idOrName, k8sFailure, record, ResourceName, specOf, statusOf, str } from "./Common.ts"
import { RemediationRef } from "./Remediations.ts"

export interface WatchEventView {
  readonly timestamp: string
  readonly resource: string
  readonly phase: string
  readonly message: string
}

const stopsWatch = (phase: string) => isTerminalPhase(phase) || phase === "AwaitingApproval"

const phaseOf = (rr: KubeObject) => str(statusOf(rr).overallPhase) ?? "Pending"

const messageOf = (rr: KubeObject) => {
  const s = statusOf(rr)
  return str(s.message) ?? str(s.blockMessage) ?? str(s.blockReason) ?? str(s.failureReason) ?? ""
}

/** Margin over a tool's own cap so the pipeline deadline never cuts it first. */
const margin = Duration.seconds(30)

export const watchTools = Effect.gen(function* () {
  const k8s = yield* K8s
  const config = yield* GatewayConfig

  const eventOf = (rr: KubeObject) =>
    Effect.map(Clock.currentTimeMillis, (now): WatchEventView => ({
      timestamp: new Date(now).toISOString(),
      resource: `RemediationRequest/${rr.metadata.name}`,
      phase: phaseOf(rr),
      message: messageOf(rr)
    }))

  const watch = (id: string, shutdown: Shutdown | undefined, progress: (message: string) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      const rr = yield* k8s.getCr("remediationrequests", id).pipe(Effect.mapError(k8sFailure(`remediation request ${id}`)))
      const first = yield* eventOf(rr)
      if (stopsWatch(first.phase)) return { events: [first], status: first.phase, rr_id: id }
      let last = first.phase
      let ended: string | undefined
      // Each phase change once; stop on terminal/AwaitingApproval/deletion; bounded in count and time.
      const changes = k8s.watchCr("remediationrequests", { name: id }).pipe(
        Stream.filter((e: WatchEvent) => e.type === "DELETED" || phaseOf(e.object) !== last),
        Stream.mapEffect((e) =>
          Effect.map(eventOf(e.object), (ev) => {
            last = ev.phase
            if (e.type === "DELETED") ended = "deleted"
            else if (stopsWatch(ev.phase)) ended = ev.phase
            return e.type === "DELETED" ? { ...ev, message: "remediation request deleted" } : ev
          })
        ),
        // Each phase change is progress the caller may show (and that keeps its request alive).
        Stream.tap((ev) => progress(`${ev.resource} is ${ev.phase}${ev.message === "" ? "" : `: ${ev.message}`}`)),
        Stream.takeUntil(() => ended !== undefined),
        Stream.take(config.watchMaxEvents - 1),
        Stream.interruptAfter(config.watchMaxDuration),
        shutdown === undefined
          ? identity
          : Stream.interruptWhen(Effect.tap(Deferred.await(shutdown.started), () => {
            ended ??= "shutdown"
          }))
      )
      const seen = yield* Stream.runCollect(changes).pipe(
        Effect.mapError(() => new ToolError({ message: "the cluster API is unavailable, please retry", code: "cluster_unavailable" }))
      )
      const events = [first, ...Chunk.toReadonlyArray(seen)]
      return { events, status: ended ?? (events.length >= config.watchMaxEvents ? "event_limit" : "timeout"), rr_id: id }
    })

  const sessionOf = (rrName: string) => (a: KubeObject) =>
    str(record(specOf(a).remediationRequestRef).name) === rrName && (str(record(statusOf(a).investigationSession).id) ?? "") !== ""

  const awaitSession = (rrName: string) =>
    Effect.gen(function* () {
      yield* k8s.getCr("remediationrequests", rrName).pipe(Effect.mapError(k8sFailure(`remediation request ${rrName}`)))
      const found = yield* k8s.watchCr("aianalyses").pipe(
        Stream.map((e) => e.object),
        Stream.filter(sessionOf(rrName)),
        Stream.runHead,
        Effect.mapError(() => new ToolError({ message: "the cluster API is unavailable, please retry", code: "cluster_unavailable" })),
        Effect.timeoutFail({
          duration: config.awaitSessionTimeout,
          onTimeout: () =>
            new ToolError({
              message: `no investigation session for ${rrName} after ${Duration.format(config.awaitSessionTimeout)}`,
              kind: "timeout",
              code: "timeout"
            })
        })
      )
      return Option.match(found, {
        onNone: () => ({ session_id: "", status: "unavailable", rr_name: rrName }),
        onSome: (a) => ({
          session_id: str(record(statusOf(a).investigationSession).id) ?? "",
          status: "ready",
          rr_name: rrName,
          ai_analysis: a.metadata.name,
          phase: str(statusOf(a).phase) ?? ""
        })
      })
    })

  return [
    defineTool({
      name: "watch",
      description: "Watch a remediation's phase changes until it reaches a terminal phase or AwaitingApproval (at most 15 minutes).",
      input: RemediationRef,
      timeout: Duration.sum(config.watchMaxDuration, margin),
      listField: "events",
      run: (input, ctx) => Effect.flatMap(idOrName(input, input.rr_id, "rr_id"), (id) => watch(id, ctx.shutdown, ctx.progress ?? (() => Effect.void)))
    }),
    defineTool({
      name: "await_session",
      description: "Wait until the investigation session of a remediation is ready (default 3 minutes).",
      input: Schema.Struct({ rr_name: ResourceName }),
      sessionDependent: true,
      timeout: Duration.sum(config.awaitSessionTimeout, margin),
      run: (input) => awaitSession(input.rr_name)
    })
  ]
})

/**
 * The RemediationRequest behind `svc_investigate` on a target. The RR's fingerprint is the SHA-256 of the target,
 * so a second start on the same target reuses the active RR (audited as `rr.deduplicated`) instead of creating a
 * twin. Its InvestigationSession comes once the agent accepted the start (SessionRecords.ts).
 */
import { Clock, Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayAudit } from "../GatewayAudit.ts"
import type { ToolContext } from "../Mcp/Tool.ts"
import { k8sFailure, specOf, statusOf, str } from "./Common.ts"

export interface Target {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly signalName?: string
}

export const targetFingerprint = (t: Target) =>
  createHash("sha256").update(["interactive", t.apiVersion, t.kind, t.namespace ?? "", t.name].join("\u0000")).digest("hex")

const suffix = () => randomBytes(3).toString("hex")

export const createTargetRr = Effect.gen(function* () {
  const k8s = yield* K8s
  const audit = yield* GatewayAudit
  const crApiVersion = `${k8s.apiGroup}/v1alpha1`
  const unavailable = k8sFailure("remediation requests")

  /** Finds or creates the RR for `t`; answers the RR name. */
  return (t: Target, ctx: ToolContext) =>
    Effect.gen(function* () {
      const fingerprint = targetFingerprint(t)
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const user = ctx.caller.principal.user
      const existing = (yield* k8s.listCr("remediationrequests").pipe(Effect.mapError(unavailable))).items.find(
        (rr: KubeObject) => str(specOf(rr).signalFingerprint) === fingerprint && !isTerminalPhase(str(statusOf(rr).overallPhase) ?? "Pending")
      )
      if (existing !== undefined) {
        yield* audit.emit({
          type: "rr.deduplicated",
          outcome: "success",
          userId: user,
          clientIp: ctx.caller.clientIp,
          correlationId: existing.metadata.name,
          data: { session_id: ctx.sessionId ?? "", fingerprint, existing_rr_name: existing.metadata.name }
        })
        return existing.metadata.name
      }
      const signalName = t.signalName ?? "InteractiveInvestigation"
      const name = `rr-${t.kind.toLowerCase()}-${t.name}`.slice(0, 40).replace(/[^a-z0-9-]/g, "-").replace(/-+$/, "") +
        `-${fingerprint.slice(0, 8)}-${suffix()}`
      yield* k8s.createCr("remediationrequests", {
        apiVersion: crApiVersion,
        kind: "RemediationRequest",
        metadata: { name, namespace: k8s.namespace, labels: { [`${k8s.apiGroup}/source`]: "interactive" } },
        spec: {
          signalName,
          signalFingerprint: fingerprint,
          severity: "unknown",
          signalType: "interactive",
          signalSource: "gateway",
          targetType: "kubernetes",
          targetResource: { apiVersion: t.apiVersion, kind: t.kind, name: t.name, ...(t.namespace === undefined ? {} : { namespace: t.namespace }) },
          firingTime: now,
          receivedTime: now,
          description: `interactive investigation started by ${user}`
        }
      }).pipe(Effect.mapError((e) =>
        e._tag === "K8sConflict"
          ? new ToolError({ message: "remediation request name collision, please retry", code: "conflict" })
          : unavailable(e)
      ))
      yield* audit.emit({
        type: "rr.created",
        outcome: "success",
        userId: user,
        clientIp: ctx.caller.clientIp,
        correlationId: name,
        ...(t.namespace === undefined ? {} : { namespace: t.namespace }),
        data: {
          session_id: ctx.sessionId ?? "",
          rr_name: name,
          rr_namespace: k8s.namespace,
          target_kind: t.kind,
          target_name: t.name,
          fingerprint,
          signal_name: signalName
        }
      })
      return name
    })
})

/**
 * The gateway's doors to a new RemediationRequest: `svc_investigate` on a target (door `interactive`) and the A2A
 * agent's `svc_remediate` (door `a2a`). Both ask core's question first (a request of any door, a signal's included,
 * already in progress on the target is answered and audited as `rr.deduplicated` instead of creating a twin) and
 * create through core's one constructor.
 */
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { TargetResource } from "@kubemend/core/domain/Meta"
import { inProgressOn, newRemediationRequest, type RequestDoor, signalFingerprint } from "@kubemend/core/domain/NewRemediationRequest"
import { K8s, type KubeObject } from "@kubemend/core/K8s"
import { ToolError } from "@kubemend/core/ToolError"
import { GatewayAudit } from "../GatewayAudit.ts"
import type { ToolContext } from "../Mcp/Tool.ts"
import { k8sFailure } from "./Common.ts"

export interface RequestAsk {
  readonly door: Extract<RequestDoor, "interactive" | "a2a">
  readonly target: TargetResource
  readonly signalName: string
  readonly severity?: string
  readonly signalType: string
  readonly description: string
  readonly signalLabels?: Readonly<Record<string, string>> | undefined
}

/** The request now handling the target: one in progress found (`existing`), or the one just created. */
export type RequestOnTarget = { readonly name: string; readonly existing: KubeObject } | { readonly name: string; readonly existing?: undefined }

const nameFor = (t: TargetResource, fingerprint: string) =>
  `rr-${t.kind}-${t.name}`.toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 40).replace(/-+$/, "") +
  `-${fingerprint.slice(0, 8)}-${randomBytes(3).toString("hex")}`

export const requestOnTarget = Effect.gen(function* () {
  const k8s = yield* K8s
  const audit = yield* GatewayAudit
  const unavailable = k8sFailure("remediation requests")

  return (ask: RequestAsk, ctx: ToolContext) =>
    Effect.gen(function* () {
      const fingerprint = signalFingerprint(ask.signalName, ask.target)
      const user = ctx.caller.principal.user
      const existing = inProgressOn((yield* k8s.listCr("remediationrequests").pipe(Effect.mapError(unavailable))).items, ask.target)
      if (existing !== undefined) {
        yield* audit.emit({
          type: "rr.deduplicated",
          outcome: "success",
          userId: user,
          clientIp: ctx.caller.clientIp,
          correlationId: existing.metadata.name,
          data: { session_id: ctx.sessionId ?? "", fingerprint, existing_rr_name: existing.metadata.name }
        })
        return { name: existing.metadata.name, existing } satisfies RequestOnTarget as RequestOnTarget
      }
      const name = nameFor(ask.target, fingerprint)
      const request = newRemediationRequest({
        apiGroup: k8s.apiGroup,
        name,
        door: ask.door,
        signalName: ask.signalName,
        target: ask.target,
        receivedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
        ...(ask.severity === undefined ? {} : { severity: ask.severity }),
        signalType: ask.signalType,
        signalSource: "gateway",
        signalLabels: ask.signalLabels,
        description: ask.description
      })
      yield* k8s.createCr("remediationrequests", { ...request, metadata: { ...request.metadata, namespace: k8s.namespace } }).pipe(
        Effect.mapError((e) =>
          e._tag === "K8sConflict" ? new ToolError({ message: "remediation request name collision, please retry", code: "conflict" }) : unavailable(e)
        )
      )
      yield* audit.emit({
        type: "rr.created",
        outcome: "success",
        userId: user,
        clientIp: ctx.caller.clientIp,
        correlationId: name,
        ...(ask.target.namespace === undefined ? {} : { namespace: ask.target.namespace }),
        data: {
          session_id: ctx.sessionId ?? "",
          rr_name: name,
          rr_namespace: k8s.namespace,
          target_kind: ask.target.kind,
          target_name: ask.target.name,
          fingerprint,
          signal_name: ask.signalName
        }
      })
      return { name } as RequestOnTarget
    })
})

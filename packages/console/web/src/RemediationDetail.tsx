/**
 * One remediation: its summary (re-read when the status stream reports a new phase), the phase timeline from the
 * audit trail, and what the audit trail says about the analysis (root cause), the selected workflow, the execution
 * and the effectiveness assessment. The stream is reopened when the gateway closes it (`status/closing`).
 */
import { Alert, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, PageSection, Title } from "@patternfly/react-core"
import { useEffect, useState } from "react"
import { callTool, stream } from "./api.ts"
import { Show, useLoad } from "./load.tsx"
import { PhaseLabel, type RemediationRow } from "./Remediations.tsx"

interface AuditEvent {
  readonly timestamp: string
  readonly event_type: string
  readonly actor: string
  readonly detail: Record<string, unknown>
}

interface Detail extends RemediationRow {
  readonly signal_name?: string
  readonly message?: string
  readonly ai_analysis?: string
  readonly failure_reason?: string
}

/** Reopens the RR's status stream until it reports a final phase; calls `onPhase` with each phase. */
const useLivePhase = (id: string, onPhase: (phase: string) => void) => {
  const [live, setLive] = useState<"connecting" | "live" | "ended" | "reconnecting">("connecting")
  useEffect(() => {
    const abort = new AbortController()
    let final = false
    const run = async () => {
      while (!final && !abort.signal.aborted) {
        try {
          await stream("/a2a/status", "status/subscribe", { rr_id: id }, (event, data) => {
            const params = (data as { params?: { phase?: string; final?: boolean } }).params ?? {}
            if (event === "status/update" && params.phase !== undefined) {
              setLive("live")
              onPhase(params.phase)
              if (params.final === true) final = true
            }
          }, abort.signal)
        } catch {
          if (abort.signal.aborted) return
        }
        if (!final) {
          setLive("reconnecting")
          await new Promise((r) => setTimeout(r, 2000))
        }
      }
      setLive("ended")
    }
    void run()
    return () => abort.abort()
  }, [id])
  return live
}

const Section = ({ title, events, pick }: { title: string; events: ReadonlyArray<AuditEvent>; pick: (e: AuditEvent) => boolean }) => {
  const chosen = events.filter(pick)
  return (
    <>
      <Title headingLevel="h2" size="lg">{title}</Title>
      {chosen.length === 0 ? <p>Nothing recorded yet.</p> : chosen.map((e, i) => (
        <div key={i}>
          <strong>{e.event_type}</strong> ({e.timestamp})<pre className="km-pre">{JSON.stringify(e.detail, null, 2)}</pre>
        </div>
      ))}
    </>
  )
}

export const RemediationDetail = ({ id }: { id: string }) => {
  const [phaseSeen, setPhaseSeen] = useState("")
  const detail = useLoad(() => callTool<Detail>("svc_get_remediation", { rr_id: id }), [id, phaseSeen])
  // The gateway's own record of tool calls about this remediation (ours included) is not part of its story.
  const trail = useLoad(() =>
    callTool<{ events: Array<AuditEvent> }>("svc_get_audit_trail", { rr_id: id })
      .then((t) => ({ events: t.events.filter((e) => !e.event_type.endsWith(".tool.executed")) })), [id, phaseSeen])
  const live = useLivePhase(id, setPhaseSeen)
  return (
    <PageSection>
      <Title headingLevel="h1">Remediation {id}</Title>
      <p aria-live="polite">
        {live === "live"
          ? "Live: phase changes appear as they happen."
          : live === "reconnecting"
          ? "Status stream closed; reconnecting…"
          : live === "ended"
          ? "Final phase reached."
          : "Connecting to the status stream…"}
      </p>
      <Show loaded={detail} what="the remediation">
        {(d) => (
          <DescriptionList isHorizontal>
            {([
              ["Phase", <PhaseLabel phase={d.phase} />],
              ["Severity", d.severity],
              ["Target", d.target],
              ["Signal", d.signal_name],
              ["Outcome", d.outcome],
              ["Analysis", d.ai_analysis],
              ["Message", d.message],
              ["Failure", d.failure_reason],
              ["Blocked", d.block_reason === undefined ? undefined : `${d.block_reason} until ${d.blocked_until ?? "?"}`]
            ] as const)
              .filter(([, v]) => v !== undefined && v !== "")
              .map(([k, v]) => (
                <DescriptionListGroup key={k}>
                  <DescriptionListTerm>{k}</DescriptionListTerm>
                  <DescriptionListDescription>{v}</DescriptionListDescription>
                </DescriptionListGroup>
              ))}
          </DescriptionList>
        )}
      </Show>
      <Show loaded={trail} what="the audit trail">
        {({ events }) => (
          <>
            <Title headingLevel="h2" size="lg">Timeline</Title>
            {events.length === 0 ?
              <Alert isInline variant="info" title="No audit events recorded for this remediation yet" /> :
              (
                <ol className="km-timeline" aria-label="Phase timeline">
                  {events.map((e, i) => (
                    <li key={i}>
                      <strong>{e.event_type}</strong> <span>{e.timestamp}</span>
                      {e.actor === "" ? "" : ` by ${e.actor}`}
                      {typeof e.detail.phase === "string" || typeof e.detail.new_phase === "string" ? ` → ${String(e.detail.new_phase ?? e.detail.phase)}` : ""}
                    </li>
                  ))}
                </ol>
              )}
            <Section title="Analysis" events={events} pick={(e) => e.event_type.startsWith("aianalysis") && JSON.stringify(e.detail).includes("root")} />
            <Section
              title="Workflow"
              events={events}
              pick={(e) =>
                /workflow\.selected|selected_workflow|workflow_id/.test(e.event_type + JSON.stringify(e.detail)) &&
                !e.event_type.startsWith("workflowexecution")}
            />
            <Section title="Execution" events={events} pick={(e) => e.event_type.startsWith("workflowexecution")} />
            <Section title="Effectiveness" events={events} pick={(e) => e.event_type.startsWith("effectiveness")} />
          </>
        )}
      </Show>
    </PageSection>
  )
}

/**
 * One remediation: its summary and story (root cause, selected workflow, execution, effectiveness scores; re-read
 * when the status stream reports a new phase), the audit chain's verification and the phase timeline from the audit
 * trail. The stream is reopened when the gateway closes it (`status/closing`).
 */
import { Alert, Breadcrumb, BreadcrumbItem, DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, PageSection, Title } from "@patternfly/react-core"
import { useEffect, useState } from "react"
import { callTool, stream } from "./api.ts"
import { type Story, StoryView } from "./detail/Story.tsx"
import { Show, useLoad } from "./load.tsx"
import { PhaseLabel, type RemediationRow } from "./Remediations.tsx"
import { navigate } from "./router.ts"

/** A link inside the app (no page load). */
const AppLink = ({ to, children }: { to: string; children: string }) => (
  <a
    href={to}
    onClick={(e) => {
      e.preventDefault()
      navigate(to)
    }}
  >
    {children}
  </a>
)

interface AuditEvent {
  readonly timestamp: string
  readonly event_type: string
  readonly actor: string
  readonly detail: Record<string, unknown>
}

interface Chain {
  readonly valid: boolean
  readonly total_events: number
  readonly verified_events: number
  readonly first_tampered_event_id?: string
  readonly message: string
}

interface Detail extends RemediationRow, Story {
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

const ChainResult = ({ chain }: { chain: Chain | undefined }) =>
  chain === undefined ? null : chain.valid ?
    (
      <Alert isInline variant="success" title="Audit chain intact">
        {chain.total_events === 0
          ? "Storage holds no events for this remediation yet, so there is nothing to verify."
          : `${chain.verified_events} of ${chain.total_events} events verified by storage's hash chain.`}
      </Alert>
    ) :
    (
      <Alert isInline variant="danger" title="Audit chain broken">
        {chain.message}
        {chain.first_tampered_event_id === undefined ? "" : ` First tampered event: ${chain.first_tampered_event_id}.`}
      </Alert>
    )

export const RemediationDetail = ({ id }: { id: string }) => {
  const [phaseSeen, setPhaseSeen] = useState("")
  // Polled too: the execution and the assessment move on without the RR changing phase.
  const detail = useLoad(() => callTool<Detail>("svc_get_remediation", { rr_id: id }), [id, phaseSeen], 10_000)
  // The gateway's own record of tool calls about this remediation (ours included) is not part of its story.
  const trail = useLoad(() =>
    callTool<{ events: Array<AuditEvent>; chain?: Chain }>("svc_get_audit_trail", { rr_id: id, verify_chain: true })
      .then((t) => ({ chain: t.chain, events: t.events.filter((e) => !e.event_type.endsWith(".tool.executed")) })), [id, phaseSeen])
  const live = useLivePhase(id, setPhaseSeen)
  return (
    <PageSection>
      <Breadcrumb>
        <BreadcrumbItem render={() => <AppLink to="/remediations">Remediations</AppLink>} />
        <BreadcrumbItem isActive>{id}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1">Remediation {id}</Title>
      <p className="km-actions">
        <AppLink to={`/investigate?rr=${encodeURIComponent(id)}`}>Its investigation session</AppLink>
        <AppLink to={`/audit?rr=${encodeURIComponent(id)}`}>Its full audit trail</AppLink>
      </p>
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
          <>
          <DescriptionList isHorizontal>
            {([
              ["Phase", <PhaseLabel phase={d.phase} />],
              ["Severity", d.severity],
              ["Target", d.target],
              ["Signal", d.signal_name],
              ["Outcome", d.outcome],
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
          <StoryView story={d} />
          </>
        )}
      </Show>
      <Show loaded={trail} what="the audit trail">
        {({ events, chain }) => (
          <>
            <Title className="km-facts" headingLevel="h2" size="lg">Audit trail</Title>
            <ChainResult chain={chain} />
            <Title className="km-facts" headingLevel="h2" size="lg">Timeline</Title>
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
          </>
        )}
      </Show>
    </PageSection>
  )
}

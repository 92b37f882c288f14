/**
 * The live list of remediations: phase, severity, target, age, outcome and a block with its countdown, filtered by
 * phase and text. Re-read every 10 s (one tool call; the gateway allows 60 a minute per user).
 */
import { Label, PageSection, SearchInput, Title, Toolbar, ToolbarContent, ToolbarItem } from "@patternfly/react-core"
import { useState } from "react"
import { callTool } from "./api.ts"
import { age, Scroll, Show, useLoad } from "./load.tsx"
import { navigate } from "./router.ts"

export interface RemediationRow {
  readonly id: string
  readonly phase: string
  readonly target: string
  readonly severity?: string
  readonly created_at?: string
  readonly outcome?: string
  readonly block_reason?: string
  readonly blocked_until?: string
}

const phaseColor = (phase: string) =>
  phase === "Completed" ? "green" : phase === "Failed" || phase === "TimedOut" ? "red" : phase === "AwaitingApproval" ?
    "orange"
    : phase === "Blocked"
    ? "purple"
    : phase === "Cancelled" || phase === "Skipped"
    ? "grey"
    : "blue"

export const PhaseLabel = ({ phase }: { phase: string }) => <Label color={phaseColor(phase)}>{phase}</Label>

const countdown = (until: string | undefined) => {
  const left = until === undefined ? NaN : Date.parse(until) - Date.now()
  return Number.isNaN(left) ? "" : left <= 0 ? "unblocking" : `${Math.ceil(left / 60000)}m left`
}

export const Remediations = () => {
  const loaded = useLoad(() => callTool<{ remediations: Array<RemediationRow> }>("svc_list_remediations"), [], 10_000)
  const [text, setText] = useState("")
  const [phase, setPhase] = useState("")
  return (
    <PageSection>
      <Title headingLevel="h1">Remediations</Title>
      <Show loaded={loaded} what="remediations">
        {({ remediations }) => {
          const phases = [...new Set(remediations.map((r) => r.phase))].sort()
          const shown = remediations.filter((r) =>
            (phase === "" || r.phase === phase) && (text === "" || `${r.id} ${r.target}`.toLowerCase().includes(text.toLowerCase()))
          )
          return (
            <>
              <Toolbar>
                <ToolbarContent>
                  <ToolbarItem>
                    <SearchInput
                      aria-label="Filter by name or target"
                      placeholder="Filter by name or target"
                      value={text}
                      onChange={(_, v) => setText(v)}
                      onClear={() => setText("")}
                    />
                  </ToolbarItem>
                  <ToolbarItem>
                    <select className="pf-v6-c-form-control" aria-label="Filter by phase" value={phase} onChange={(e) => setPhase(e.target.value)}>
                      <option value="">All phases</option>
                      {phases.map((p) => <option key={p} value={p}>{p}</option>)}
                    </select>
                  </ToolbarItem>
                </ToolbarContent>
              </Toolbar>
              <Scroll label="Remediations list">
                <table className="pf-v6-c-table pf-m-compact" aria-label="Remediations">
                  <thead className="pf-v6-c-table__thead">
                    <tr className="pf-v6-c-table__tr">
                      {["Name", "Phase", "Severity", "Target", "Age", "Outcome"].map((h) => <th key={h} className="pf-v6-c-table__th" scope="col">{h}</th>)}
                    </tr>
                  </thead>
                  <tbody className="pf-v6-c-table__tbody">
                    {shown.map((r) => (
                      <tr key={r.id} className="pf-v6-c-table__tr">
                        <td className="pf-v6-c-table__td" data-label="Name">
                          <a
                            href={`/remediations/${encodeURIComponent(r.id)}`}
                            onClick={(e) => {
                              e.preventDefault()
                              navigate(`/remediations/${encodeURIComponent(r.id)}`)
                            }}
                          >
                            {r.id}
                          </a>
                        </td>
                        <td className="pf-v6-c-table__td" data-label="Phase">
                          <PhaseLabel phase={r.phase} />
                          {r.phase === "Blocked" && <>{r.block_reason ?? ""} {countdown(r.blocked_until)}</>}
                        </td>
                        <td className="pf-v6-c-table__td" data-label="Severity">{r.severity ?? ""}</td>
                        <td className="pf-v6-c-table__td" data-label="Target">{r.target}</td>
                        <td className="pf-v6-c-table__td" data-label="Age">{age(r.created_at)}</td>
                        <td className="pf-v6-c-table__td" data-label="Outcome">{r.outcome ?? ""}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </Scroll>
              {shown.length === 0 && <p>No remediations match.</p>}
            </>
          )
        }}
      </Show>
    </PageSection>
  )
}

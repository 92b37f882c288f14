/** The audit trail of one remediation, as storage holds it (through `svc_get_audit_trail`), newest last. */
import { Button, Form, FormGroup, PageSection, TextInput, Title } from "@patternfly/react-core"
import { useState } from "react"
import { callTool } from "./api.ts"
import { Scroll, Show, useLoad } from "./load.tsx"

interface Trail {
  readonly events: ReadonlyArray<{ readonly timestamp: string; readonly event_type: string; readonly actor: string; readonly detail: unknown }>
  readonly total: number
}

const Events = ({ rr }: { rr: string }) => {
  const loaded = useLoad(() => callTool<Trail>("svc_get_audit_trail", { rr_id: rr }), [rr])
  return (
    <Show loaded={loaded} what="the audit trail">
      {({ events, total }) => (
        <Scroll label={`Audit events of ${rr}`}>
          <p>{total} events for {rr}.</p>
          <table className="pf-v6-c-table pf-m-compact" aria-label={`Audit trail of ${rr}`}>
            <thead className="pf-v6-c-table__thead">
              <tr className="pf-v6-c-table__tr">
                {["Time", "Event", "Actor", "Detail"].map((h) => <th key={h} className="pf-v6-c-table__th" scope="col">{h}</th>)}
              </tr>
            </thead>
            <tbody className="pf-v6-c-table__tbody">
              {events.map((e, i) => (
                <tr key={i} className="pf-v6-c-table__tr">
                  <td className="pf-v6-c-table__td">{e.timestamp}</td>
                  <td className="pf-v6-c-table__td">{e.event_type}</td>
                  <td className="pf-v6-c-table__td">{e.actor}</td>
                  <td className="pf-v6-c-table__td">
                    <span className="km-pre">{JSON.stringify(e.detail)}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
    </Show>
  )
}

export const AuditTrail = () => {
  const [draft, setDraft] = useState(new URLSearchParams(window.location.search).get("rr") ?? "")
  const [rr, setRr] = useState(draft)
  return (
    <PageSection>
      <Title headingLevel="h1">Audit trail</Title>
      <Form
        isHorizontal
        onSubmit={(e) => {
          e.preventDefault()
          setRr(draft.trim())
        }}
      >
        <FormGroup label="Remediation (rr_id)" fieldId="rr">
          <TextInput id="rr" value={draft} onChange={(_, v) => setDraft(v)} />
        </FormGroup>
        <Button type="submit">Show</Button>
      </Form>
      {rr !== "" && <Events rr={rr} />}
    </PageSection>
  )
}

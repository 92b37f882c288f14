/**
 * Pending approval requests with confidence and time remaining; each shows the evidence, why approval is required
 * and the recommended workflow. Approve or reject (a reason is required to reject); approving may run another
 * workflow picked from the catalog the request carries. A persona without the approval tools is told so.
 */
import { Alert, Button, Card, CardBody, CardTitle, EmptyState, EmptyStateBody, PageSection, Title } from "@patternfly/react-core"
import { useState } from "react"
import { ApiError, callTool } from "./api.ts"
import { Decide, type Decision, type Full, type Pending } from "./approvals/Decide.tsx"
import { Show, useLoad } from "./load.tsx"

const Details = ({ d }: { d: Full }) => (
  <>
    <p>
      <strong>Why approval:</strong> {d.why_approval_required ?? ""}
    </p>
    <p>
      <strong>Summary:</strong> {d.investigation_summary ?? ""}
    </p>
    <p>
      <strong>Recommended workflow:</strong> {d.recommended_workflow?.name ?? ""} {d.recommended_workflow?.version ?? ""}
    </p>
    {(d.evidence_collected ?? []).length > 0 && (
      <>
        <strong>Evidence</strong>
        <ul aria-label="Evidence">{d.evidence_collected!.map((e, i) => <li key={i}>{e}</li>)}</ul>
      </>
    )}
  </>
)

const Request = ({ rar, onDecide }: { rar: Pending; onDecide: (full: Full, decision: Decision) => void }) => {
  const loaded = useLoad(() => callTool<Full>("svc_get_approval_request", { rar_id: rar.name }), [rar.name])
  return (
    <Card isCompact>
      <CardTitle component="h2">{rar.name} for {rar.remediation_request}</CardTitle>
      <CardBody>
        <p>
          Confidence {Math.round(rar.confidence * 100)}% ({rar.confidence_level}), {rar.time_remaining === "" ? "no deadline" : `${rar.time_remaining} left`}
        </p>
        <Show loaded={loaded} what="the approval request">
          {(d) => (
            <>
              <Details d={d} />
              <Button onClick={() => onDecide(d, "Approved")}>Approve</Button>{" "}
              <Button variant="danger" onClick={() => onDecide(d, "Rejected")}>Reject</Button>
            </>
          )}
        </Show>
      </CardBody>
    </Card>
  )
}

/** What a persona without the approval tools sees instead of the inbox. */
const NoPermission = ({ message }: { message: string }) => (
  <EmptyState titleText="No permission to review approvals" headingLevel="h2" status="warning">
    <EmptyStateBody>
      Your account may not see or decide approval requests ({message}). The remediation-approver role grants it; ask a platform administrator.
    </EmptyStateBody>
  </EmptyState>
)

export const Approvals = () => {
  const loaded = useLoad(() => callTool<{ approval_requests: Array<Pending> }>("svc_list_approval_requests", { decision: "pending" }), [], 15_000)
  const [deciding, setDeciding] = useState<{ rar: Full; decision: Decision } | undefined>()
  const [done, setDone] = useState<string | undefined>()
  const refused = loaded.error instanceof ApiError && loaded.error.status === 403
  return (
    <PageSection>
      <Title headingLevel="h1">Approvals</Title>
      {done !== undefined && <Alert isInline variant="success" title={done} />}
      {refused ? <NoPermission message={loaded.error!.message} /> : (
        <Show loaded={loaded} what="approval requests">
          {({ approval_requests }) =>
            approval_requests.length === 0 ?
              <p>No approval requests are waiting.</p> :
              approval_requests.map((r) => <Request key={r.name} rar={r} onDecide={(rar, decision) => setDeciding({ rar, decision })} />)}
        </Show>
      )}
      {deciding !== undefined && (
        <Decide
          {...deciding}
          onClose={(outcome) => {
            if (outcome !== undefined) setDone(outcome)
            setDeciding(undefined)
            loaded.reload()
          }}
        />
      )}
    </PageSection>
  )
}

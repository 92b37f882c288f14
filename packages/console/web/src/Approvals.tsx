/**
 * Pending approval requests with confidence and time remaining; opening one shows the evidence, why approval is
 * required and the recommended workflow. Approve or reject (a reason is required to reject), optionally with
 * another workflow from the catalog. A persona without the approval tools sees "no permission".
 */
import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Form,
  FormGroup,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  PageSection,
  TextArea,
  TextInput,
  Title
} from "@patternfly/react-core"
import { useState } from "react"
import { callTool } from "./api.ts"
import { Show, useLoad } from "./load.tsx"

interface Pending {
  readonly name: string
  readonly remediation_request: string
  readonly confidence: number
  readonly confidence_level: string
  readonly time_remaining: string
}

interface Full extends Pending {
  readonly investigation_summary?: string
  readonly why_approval_required?: string
  readonly recommended_workflow?: { readonly name: string; readonly version: string }
  readonly evidence_collected?: ReadonlyArray<string>
}

const Details = ({ name }: { name: string }) => {
  const loaded = useLoad(() => callTool<Full>("svc_get_approval_request", { rar_id: name }), [name])
  return (
    <Show loaded={loaded} what="the approval request">
      {(d) => (
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
          {(d.evidence_collected ?? []).length > 0 && <ul aria-label="Evidence">{d.evidence_collected!.map((e, i) => <li key={i}>{e}</li>)}</ul>}
        </>
      )}
    </Show>
  )
}

const Decide = ({ rar, decision, onClose }: { rar: Pending; decision: "Approved" | "Rejected"; onClose: (done: boolean) => void }) => {
  const [reason, setReason] = useState("")
  const [override, setOverride] = useState("")
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const submit = () => {
    if (decision === "Rejected" && reason.trim() === "") return setError("Say why it is rejected.")
    setBusy(true)
    callTool("svc_approve", {
      rar_name: rar.name,
      decision,
      ...(reason.trim() === "" ? {} : { reason: reason.trim() }),
      ...(override.trim() === "" ? {} : { workflow_override: override.trim() })
    }).then(() => onClose(true), (e: unknown) => {
      setBusy(false)
      setError(e instanceof Error ? e.message : String(e))
    })
  }
  return (
    <Modal isOpen variant="small" onClose={() => onClose(false)} aria-labelledby="decide-title">
      <ModalHeader title={`${decision === "Approved" ? "Approve" : "Reject"} ${rar.name}`} labelId="decide-title" />
      <ModalBody>
        {error !== undefined && <Alert isInline variant="danger" title="The decision was not recorded">{error}</Alert>}
        <Form
          onSubmit={(e) => {
            e.preventDefault()
            submit()
          }}
        >
          <FormGroup label="Reason" fieldId="reason" isRequired={decision === "Rejected"}>
            <TextArea id="reason" value={reason} onChange={(_, v) => setReason(v)} />
          </FormGroup>
          {decision === "Approved" && (
            <FormGroup label="Run another workflow instead (optional, a catalog workflow id)" fieldId="override">
              <TextInput id="override" value={override} onChange={(_, v) => setOverride(v)} />
            </FormGroup>
          )}
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button variant={decision === "Approved" ? "primary" : "danger"} onClick={submit} isLoading={busy} isDisabled={busy}>
          {decision === "Approved" ? "Approve" : "Reject"}
        </Button>
        <Button variant="link" onClick={() => onClose(false)}>Cancel</Button>
      </ModalFooter>
    </Modal>
  )
}

export const Approvals = () => {
  const loaded = useLoad(() => callTool<{ approval_requests: Array<Pending> }>("svc_list_approval_requests", { decision: "pending" }), [], 15_000)
  const [deciding, setDeciding] = useState<{ rar: Pending; decision: "Approved" | "Rejected" } | undefined>()
  const [done, setDone] = useState<string | undefined>()
  return (
    <PageSection>
      <Title headingLevel="h1">Approvals</Title>
      {done !== undefined && <Alert isInline variant="success" title={done} />}
      <Show loaded={loaded} what="approval requests">
        {({ approval_requests }) =>
          approval_requests.length === 0 ? <p>No approval requests are waiting.</p> : (
            <>
              {approval_requests.map((r) => (
                <Card key={r.name} isCompact>
                  <CardTitle>{r.name} for {r.remediation_request}</CardTitle>
                  <CardBody>
                    <p>
                      Confidence {Math.round(r.confidence * 100)}% ({r.confidence_level}),{" "}
                      {r.time_remaining === "" ? "no deadline" : `${r.time_remaining} left`}
                    </p>
                    <Details name={r.name} />
                    <Button onClick={() => setDeciding({ rar: r, decision: "Approved" })}>Approve</Button>{" "}
                    <Button variant="danger" onClick={() => setDeciding({ rar: r, decision: "Rejected" })}>Reject</Button>
                  </CardBody>
                </Card>
              ))}
            </>
          )}
      </Show>
      {deciding !== undefined && (
        <Decide
          {...deciding}
          onClose={(ok) => {
            if (ok) setDone(`${deciding.rar.name} ${deciding.decision.toLowerCase()}`)
            setDeciding(undefined)
            loaded.reload()
          }}
        />
      )}
    </PageSection>
  )
}

/**
 * The decision dialog: a reason (required to reject) and, when approving, the workflow to run: the recommended one
 * or another from the catalog the request carries. Refusals are shown in the gateway's words.
 */
import { Alert, Button, Form, FormGroup, FormSelect, FormSelectOption, Modal, ModalBody, ModalFooter, ModalHeader, TextArea } from "@patternfly/react-core"
import { useState } from "react"
import { callTool } from "../api.ts"

export type Decision = "Approved" | "Rejected"

export interface Pending {
  readonly name: string
  readonly remediation_request: string
  readonly confidence: number
  readonly confidence_level: string
  readonly time_remaining: string
}

interface CatalogWorkflow {
  readonly id: string
  readonly name: string
  readonly action_type: string
  readonly description: string
}

export interface Full extends Pending {
  readonly investigation_summary?: string
  readonly why_approval_required?: string
  readonly recommended_workflow?: { readonly name: string; readonly version: string }
  readonly evidence_collected?: ReadonlyArray<string>
  readonly workflow_catalog?: ReadonlyArray<CatalogWorkflow>
}

/** `onClose` gets what was recorded, or nothing when the dialog was dismissed. */
export const Decide = ({ rar, decision, onClose }: { rar: Full; decision: Decision; onClose: (outcome?: string) => void }) => {
  const [reason, setReason] = useState("")
  const recommended = rar.recommended_workflow?.name ?? ""
  const catalog = rar.workflow_catalog
  // The picker holds RemediationWorkflow names: an override names the workflow (the catalog's latest version of it).
  const recommendedName = catalog?.some((w) => w.name === recommended) === true ? recommended : ""
  const [workflow, setWorkflow] = useState(recommendedName)
  const [error, setError] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const override = decision === "Approved" && workflow !== "" && workflow !== recommendedName ? catalog?.find((w) => w.name === workflow) : undefined
  const submit = () => {
    if (decision === "Rejected" && reason.trim() === "") return setError("Say why it is rejected.")
    setBusy(true)
    callTool("svc_approve", {
      rar_name: rar.name,
      decision,
      ...(reason.trim() === "" ? {} : { reason: reason.trim() }),
      ...(override === undefined ? {} : { workflow_override: override.name })
    }).then(
      () => onClose(`${rar.name} ${decision.toLowerCase()}${override === undefined ? "" : ` with workflow ${override.name}`}`),
      (e: unknown) => {
        setBusy(false)
        setError(e instanceof Error ? e.message : String(e))
      }
    )
  }
  return (
    <Modal isOpen variant="small" onClose={() => onClose()} aria-labelledby="decide-title">
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
            <FormGroup label="Workflow to run" fieldId="workflow">
              {catalog === undefined ?
                <p>The workflow catalog could not be read; approving runs the recommended workflow.</p> :
                (
                  <FormSelect id="workflow" value={workflow} onChange={(_, v) => setWorkflow(v)}>
                    {recommendedName !== "" && <FormSelectOption value={recommendedName} label={`${recommended} (recommended)`} />}
                    {catalog.filter((w) => w.name !== recommendedName).map((w) => (
                      <FormSelectOption key={w.name} value={w.name} label={`${w.name}: ${w.description}`} />
                    ))}
                  </FormSelect>
                )}
            </FormGroup>
          )}
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button variant={decision === "Approved" ? "primary" : "danger"} onClick={submit} isLoading={busy} isDisabled={busy}>
          {decision === "Approved" ? "Approve" : "Reject"}
        </Button>
        <Button variant="link" onClick={() => onClose()}>Cancel</Button>
      </ModalFooter>
    </Modal>
  )
}

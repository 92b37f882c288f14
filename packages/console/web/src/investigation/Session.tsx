/**
 * The interactive investigation session of one remediation, as `svc_status` reports it: who holds it, its root
 * cause card (no action, or escalate with a reason) and its workflow card (the workflows `svc_discover_workflows`
 * found, each selectable: select then complete starts the remediation). A session another user holds can be taken
 * over after a confirmation, which abandons their investigation.
 */
import { Alert, Button, Card, CardBody, CardTitle, Modal, ModalBody, ModalFooter, ModalHeader, TextInput } from "@patternfly/react-core"
import { useState } from "react"
import { callTool, me } from "../api.ts"
import { Show, useLoad } from "../load.tsx"
import { navigate } from "../router.ts"

interface SessionStatus {
  readonly status: string
  readonly holder?: string
  readonly analysis?: string
  readonly summary?: string
}

interface Discovered {
  readonly workflow_id: string
  readonly name: string
  readonly description?: string
  readonly action_type?: string
}

const Workflows = ({ rr, act }: { rr: string; act: (what: string, run: () => Promise<unknown>) => void }) => {
  const found = useLoad(() => callTool<{ workflows: ReadonlyArray<Discovered> }>("svc_discover_workflows", { rr_id: rr }), [rr])
  return (
    <Card isCompact>
      <CardTitle component="h3">Workflow decision</CardTitle>
      <CardBody>
        <Show loaded={found} what="the workflows that fit">
          {({ workflows }) =>
            workflows.length === 0 ? <p>No catalog workflow fits this investigation.</p> : (
              <ul className="km-options" aria-label="Workflows that fit">
                {workflows.map((w) => (
                  <li key={w.workflow_id}>
                    <strong>{w.name}</strong> {w.description === undefined ? "" : `: ${w.description}`}{" "}
                    <Button
                      size="sm"
                      aria-label={`Select ${w.name}`}
                      onClick={() =>
                        act(`Selected ${w.name}; the remediation starts.`, async () => {
                          await callTool("svc_select_workflow", { rr_id: rr, workflow_id: w.workflow_id })
                          return callTool("svc_complete", { rr_id: rr, message: `selected ${w.name} in the console` })
                        })}
                    >
                      Select
                    </Button>
                  </li>
                ))}
              </ul>
            )}
        </Show>
      </CardBody>
    </Card>
  )
}

export const Session = ({ rr }: { rr: string }) => {
  const [tick, setTick] = useState(0)
  const status = useLoad(() => callTool<SessionStatus>("svc_status", { rr_id: rr }), [rr, tick], 5_000)
  const user = useLoad(me, [])
  const [reason, setReason] = useState("")
  const [confirming, setConfirming] = useState(false)
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | undefined>()
  const [busy, setBusy] = useState(false)

  const act = (what: string, run: () => Promise<unknown>) => {
    setBusy(true)
    run().then(
      () => setOutcome({ ok: true, text: what }),
      (e: unknown) => setOutcome({ ok: false, text: e instanceof Error ? e.message : String(e) })
    ).finally(() => {
      setBusy(false)
      setTick((t) => t + 1)
    })
  }

  return (
    <section className="km-session" aria-label={`Investigation of ${rr}`}>
      <Card>
        <CardTitle component="h2">
          Investigation of{" "}
          <a
            href={`/remediations/${rr}`}
            onClick={(e) => {
              e.preventDefault()
              navigate(`/remediations/${rr}`)
            }}
          >
            {rr}
          </a>
        </CardTitle>
        <CardBody>
          {outcome !== undefined && <Alert isInline variant={outcome.ok ? "success" : "danger"} title={outcome.ok ? outcome.text : "The agent refused"}>{outcome.ok ? "" : outcome.text}</Alert>}
          <Show loaded={status} what="the investigation session">
            {(s) => {
              const mine = s.holder === undefined || s.holder === user.data?.user
              const open = s.status === "active"
              return (
                <>
                  <p aria-live="polite">
                    Session {s.status}
                    {s.holder === undefined ? "" : `, held by ${s.holder}`}
                    {s.analysis === undefined ? "" : `; analysis ${s.analysis}`}.
                  </p>
                  {open && !mine && (
                    <Alert isInline variant="warning" title={`${s.holder ?? "Another user"} is driving this investigation`}>
                      <Button variant="secondary" onClick={() => setConfirming(true)} isDisabled={busy}>Take over</Button>
                    </Alert>
                  )}
                  <Card isCompact>
                    <CardTitle component="h3">Root cause</CardTitle>
                    <CardBody>
                      <p className="km-text">{s.summary ?? "The analysis has not answered yet."}</p>
                      {open && mine && (
                        <div className="km-actions">
                          <Button variant="secondary" isDisabled={busy} onClick={() => act("Closed with no action.", () => callTool("svc_complete_no_action", { rr_id: rr }))}>
                            No action
                          </Button>
                          <TextInput aria-label="Escalation reason" placeholder="Why a human team should look" value={reason} onChange={(_, v) => setReason(v)} />
                          <Button
                            variant="warning"
                            isDisabled={busy || reason.trim() === ""}
                            onClick={() => act("Escalated to a human team.", () => callTool("svc_complete_no_action", { rr_id: rr, escalation_reason: reason.trim() }))}
                          >
                            Escalate
                          </Button>
                        </div>
                      )}
                    </CardBody>
                  </Card>
                  {open && mine && s.analysis === "answered" && <Workflows rr={rr} act={act} />}
                </>
              )
            }}
          </Show>
        </CardBody>
      </Card>
      {confirming && (
        <Modal isOpen variant="small" onClose={() => setConfirming(false)} aria-labelledby="takeover-title">
          <ModalHeader title={`Take over the investigation of ${rr}?`} labelId="takeover-title" />
          <ModalBody>The current holder's investigation is abandoned and they are told so. You continue from the remediation as it is.</ModalBody>
          <ModalFooter>
            <Button
              variant="danger"
              onClick={() => {
                setConfirming(false)
                act("You hold the investigation now.", () => callTool("svc_investigate", { rr_id: rr, join_mode: "takeover" }))
              }}
            >
              Take over
            </Button>
            <Button variant="link" onClick={() => setConfirming(false)}>Cancel</Button>
          </ModalFooter>
        </Modal>
      )}
    </section>
  )
}

/**
 * A conversation with the gateway's investigation agent over A2A `message/stream`. The `contextId` is kept in
 * this browser (so a reload continues the conversation) until "New conversation". The agent's intermediate status
 * messages are its reasoning, shown collapsed; artifacts (root cause, workflow) and its final answer are shown.
 */
import { Alert, Button, ExpandableSection, Form, PageSection, TextArea, Title } from "@patternfly/react-core"
import { useRef, useState } from "react"
import { stream } from "./api.ts"

interface Turn {
  readonly role: "user" | "agent"
  readonly text: string
  readonly reasoning: ReadonlyArray<string>
  readonly artifacts: ReadonlyArray<{ readonly name: string; readonly text: string }>
  readonly state?: string
}

const contextKey = "kubemend.console.contextId"
const turnsKey = "kubemend.console.turns"

interface StreamResult {
  readonly kind?: string
  readonly contextId?: string
  readonly final?: boolean
  readonly status?: { readonly state?: string; readonly message?: { readonly parts?: ReadonlyArray<{ readonly text?: string }> } }
  readonly artifact?: { readonly name?: string; readonly parts?: ReadonlyArray<{ readonly text?: string }> }
}

const textOf = (parts: ReadonlyArray<{ readonly text?: string }> | undefined) => (parts ?? []).map((p) => p.text ?? "").join("")

export const Investigation = () => {
  const [turns, setTurns] = useState<ReadonlyArray<Turn>>(() => JSON.parse(sessionStorage.getItem(turnsKey) ?? "[]") as Array<Turn>)
  const [draft, setDraft] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const contextId = useRef<string | null>(localStorage.getItem(contextKey))

  const save = (next: ReadonlyArray<Turn>) => {
    sessionStorage.setItem(turnsKey, JSON.stringify(next))
    setTurns(next)
  }

  const send = async () => {
    const text = draft.trim()
    if (text === "" || busy) return
    setDraft("")
    setBusy(true)
    setError(undefined)
    let agent: Turn = { role: "agent", text: "", reasoning: [], artifacts: [] }
    const base = [...turns, { role: "user" as const, text, reasoning: [], artifacts: [] }]
    save([...base, agent])
    try {
      await stream("/a2a/invoke", "message/stream", {
        message: {
          kind: "message",
          role: "user",
          messageId: crypto.randomUUID(),
          parts: [{ kind: "text", text }],
          ...(contextId.current === null ? {} : { contextId: contextId.current })
        }
      }, (_, data) => {
        const rpc = data as { result?: StreamResult; error?: { message: string } }
        if (rpc.error !== undefined) return setError(rpc.error.message)
        const r = rpc.result ?? {}
        if (r.contextId !== undefined && r.contextId !== contextId.current) {
          contextId.current = r.contextId
          localStorage.setItem(contextKey, r.contextId)
        }
        if (r.kind === "artifact-update" && r.artifact !== undefined) {
          agent = { ...agent, artifacts: [...agent.artifacts, { name: r.artifact.name ?? "result", text: textOf(r.artifact.parts) }] }
        } else if (r.status !== undefined) {
          const said = textOf(r.status.message?.parts)
          const state = r.status.state ?? ""
          agent = r.final === true || state === "completed" || state === "input-required" || state === "failed"
            ? { ...agent, text: said === "" ? agent.text : said, state }
            : { ...agent, reasoning: said === "" ? agent.reasoning : [...agent.reasoning, said], state }
        }
        save([...base, agent])
      }, new AbortController().signal)
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    } finally {
      setBusy(false)
    }
  }

  const reset = () => {
    localStorage.removeItem(contextKey)
    contextId.current = null
    save([])
  }

  return (
    <PageSection>
      <Title headingLevel="h1">Investigation</Title>
      <Button variant="secondary" onClick={reset} isDisabled={busy}>New conversation</Button>
      <div className="km-chat" aria-live="polite" aria-label="Conversation">
        {turns.map((t, i) => (
          <div key={i}>
            <Title headingLevel="h2" size="md">{t.role === "user" ? "You" : "Agent"}{t.state === undefined ? "" : ` (${t.state})`}</Title>
            {t.reasoning.length > 0 && (
              <ExpandableSection toggleText={`Reasoning (${t.reasoning.length} steps)`}>
                <ol>{t.reasoning.map((r, j) => <li key={j} className="km-pre">{r}</li>)}</ol>
              </ExpandableSection>
            )}
            {t.artifacts.map((a, j) => (
              <Alert key={j} isInline variant="info" title={a.name}>
                <div className="km-pre">{a.text}</div>
              </Alert>
            ))}
            <div className="km-pre">{t.text === "" && t.role === "agent" && busy && i === turns.length - 1 ? "…" : t.text}</div>
          </div>
        ))}
      </div>
      {error !== undefined && <Alert isInline variant="danger" title="The agent could not answer">{error}</Alert>}
      <Form
        onSubmit={(e) => {
          e.preventDefault()
          void send()
        }}
      >
        <TextArea
          aria-label="Message to the investigation agent"
          value={draft}
          onChange={(_, v) => setDraft(v)}
          placeholder="Ask about an incident, e.g. why is checkout in demo-shop crash-looping?"
        />
        <Button type="submit" isDisabled={busy || draft.trim() === ""} isLoading={busy}>Send</Button>
      </Form>
    </PageSection>
  )
}

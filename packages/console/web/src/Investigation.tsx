/**
 * A conversation with the gateway's investigation agent over A2A `message/stream`. The `contextId` and the turns
 * are kept in this browser (a reload continues the conversation) until "New conversation". The agent's reasoning is
 * collapsed, the interactive session's live events are shown as they arrive, and each remediation the agent
 * investigated gets its decision cards (Session.tsx).
 */
import { Alert, Button, ExpandableSection, Form, PageSection, TextArea, Title } from "@patternfly/react-core"
import { useRef, useState } from "react"
import { stream } from "./api.ts"
import { Session } from "./investigation/Session.tsx"
import { advance, emptyTurn, type StreamResult, type Turn } from "./investigation/Turn.ts"

const contextKey = "kubemend.console.contextId"
const turnsKey = "kubemend.console.turns"

const load = (): ReadonlyArray<Turn> => {
  try {
    return (JSON.parse(localStorage.getItem(turnsKey) ?? "[]") as Array<Turn>).map((t) => ({ ...emptyTurn(t.role), ...t }))
  } catch {
    return []
  }
}

const Said = ({ turn, waiting }: { turn: Turn; waiting: boolean }) => (
  <div className="km-turn">
    <Title headingLevel="h2" size="md">{turn.role === "user" ? "You" : "Agent"}{turn.state === undefined || turn.state === "" ? "" : ` (${turn.state})`}</Title>
    {turn.reasoning.length > 0 && (
      <ExpandableSection toggleText={`Reasoning (${turn.reasoning.length} steps)`}>
        <ol>{turn.reasoning.map((r, j) => <li key={j} className="km-text">{r}</li>)}</ol>
      </ExpandableSection>
    )}
    {turn.live.length > 0 && (
      <section aria-label="Live investigation events">
        <strong>Live investigation events</strong>
        <ul className="km-live">{turn.live.map((e, j) => <li key={j} className="km-text">{e}</li>)}</ul>
      </section>
    )}
    {turn.artifacts.map((a, j) => (
      <Alert key={j} isInline variant="info" title={a.name}>
        <div className="km-pre">{a.text}</div>
      </Alert>
    ))}
    {waiting && turn.doing !== undefined && <p className="km-doing">{turn.doing}</p>}
    <div className="km-text">{turn.text === "" && turn.role === "agent" && waiting ? "…" : turn.text}</div>
  </div>
)

export const Investigation = () => {
  const [turns, setTurns] = useState<ReadonlyArray<Turn>>(load)
  const [draft, setDraft] = useState("")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const contextId = useRef<string | null>(localStorage.getItem(contextKey))

  const save = (next: ReadonlyArray<Turn>) => {
    localStorage.setItem(turnsKey, JSON.stringify(next))
    setTurns(next)
  }

  const send = async () => {
    const text = draft.trim()
    if (text === "" || busy) return
    setDraft("")
    setBusy(true)
    setError(undefined)
    let agent = emptyTurn("agent")
    const base = [...turns, emptyTurn("user", text)]
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
        agent = advance(agent, r)
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
    setError(undefined)
    save([])
  }

  // `?rr=` opens one remediation's session (from a remediation's page, or to take one over).
  const asked = new URLSearchParams(window.location.search).get("rr")
  const investigated = [...new Set([...(asked === null ? [] : [asked]), ...turns.flatMap((t) => t.rrIds)])]
  return (
    <PageSection>
      <Title headingLevel="h1">Investigation</Title>
      <Button variant="secondary" onClick={reset} isDisabled={busy}>New conversation</Button>
      <div className="km-chat" role="log" aria-label="Conversation" tabIndex={0}>
        {turns.length === 0 && <p>No conversation yet. Ask the agent about an incident below.</p>}
        {turns.map((t, i) => <Said key={i} turn={t} waiting={busy && i === turns.length - 1} />)}
      </div>
      {error !== undefined && <Alert isInline variant="danger" title="The agent could not answer">{error}</Alert>}
      {!busy && investigated.map((rr) => <Session key={rr} rr={rr} />)}
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

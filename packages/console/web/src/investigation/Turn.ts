/**
 * One exchange of the chat as the A2A stream builds it: the agent's intermediate `reasoning` and tool `status`
 * messages, the interactive session's live `investigation` events, artifacts, its final answer, and the
 * remediations the task created or investigated (`rr_ids` on the final event).
 */
export interface Turn {
  readonly role: "user" | "agent"
  readonly text: string
  readonly reasoning: ReadonlyArray<string>
  readonly live: ReadonlyArray<string>
  readonly artifacts: ReadonlyArray<{ readonly name: string; readonly text: string }>
  readonly state?: string
  readonly doing?: string | undefined
  readonly rrIds: ReadonlyArray<string>
}

export const emptyTurn = (role: Turn["role"], text = ""): Turn => ({ role, text, reasoning: [], live: [], artifacts: [], rrIds: [] })

interface Part {
  readonly text?: string
}

export interface StreamResult {
  readonly kind?: string
  readonly contextId?: string
  readonly final?: boolean
  readonly metadata?: { readonly type?: string; readonly rr_ids?: ReadonlyArray<string> }
  readonly status?: { readonly state?: string; readonly message?: { readonly parts?: ReadonlyArray<Part> } }
  readonly artifact?: { readonly name?: string; readonly parts?: ReadonlyArray<Part> }
}

const textOf = (parts: ReadonlyArray<Part> | undefined) => (parts ?? []).map((p) => p.text ?? "").join("")

const terminal = new Set(["completed", "failed", "canceled", "cancelled", "rejected", "input-required"])

/** The agent's turn after one stream event. */
export const advance = (turn: Turn, r: StreamResult): Turn => {
  if (r.kind === "artifact-update" && r.artifact !== undefined) {
    // The final answer is also the final status message: shown once.
    if (r.artifact.name === "answer") return turn
    return { ...turn, artifacts: [...turn.artifacts, { name: r.artifact.name ?? "result", text: textOf(r.artifact.parts) }] }
  }
  if (r.status === undefined) return turn
  const said = textOf(r.status.message?.parts)
  const state = r.status.state ?? turn.state ?? ""
  const type = r.metadata?.type
  if (r.final === true || terminal.has(state)) {
    return { ...turn, text: said === "" ? turn.text : said, state, doing: undefined, rrIds: r.metadata?.rr_ids ?? turn.rrIds }
  }
  if (said === "" || type === "keepalive") return { ...turn, state }
  if (type === "reasoning") return { ...turn, state, reasoning: [...turn.reasoning, said] }
  if (type === "investigation") return { ...turn, state, live: [...turn.live, said] }
  return { ...turn, state, doing: said }
}

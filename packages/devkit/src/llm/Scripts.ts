/**
 * Transcripts the scripted LLM server plays. A script is data: a list of turns, each either tool calls or a final
 * answer. The turn played is the number of assistant messages already in the conversation, so a conversation
 * replays identically. String values may use `{{name}}` or `{{name|fallback}}`, filled from `"name": "value"` /
 * `name: value` pairs found in the conversation's first user message (e.g. the incident's `resource_namespace`).
 */

export interface ScriptedToolCall {
  readonly name: string
  readonly arguments: Record<string, unknown>
}

export type ScriptedTurn =
  /** The model asks for these tools (optionally with some text alongside). */
  | { readonly toolCalls: ReadonlyArray<ScriptedToolCall>; readonly text?: string }
  /** A final text answer. */
  | { readonly text: string }
  /** A final answer that is a JSON document (sent as its text). */
  | { readonly json: unknown }

export interface Script {
  readonly name: string
  /**
   * Played when the first user message contains this text (every one of them, for a list: e.g. an incident and the
   * workflow-selection phase's opening); a script without `match` is the default.
   */
  readonly match?: string | ReadonlyArray<string>
  readonly turns: ReadonlyArray<ScriptedTurn>
}

export interface WireMessage {
  readonly role: string
  readonly content?: unknown
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : "")).join("")
    : ""

export const firstUserText = (messages: ReadonlyArray<WireMessage>) => textOf(messages.find((m) => m.role === "user")?.content)

/** The script for a conversation: the first whose `match` occurs in the first user message, else the default. */
export const chooseScript = (scripts: ReadonlyArray<Script>, messages: ReadonlyArray<WireMessage>) => {
  const first = firstUserText(messages)
  const fits = (m: string | ReadonlyArray<string>) => (typeof m === "string" ? [m] : m).every((part) => first.includes(part))
  return scripts.find((s) => s.match !== undefined && fits(s.match)) ??
    scripts.find((s) => s.match === undefined)
}

/** The turn to play: one per assistant message so far; past the end, the last turn (the final answer) repeats. */
export const turnFor = (script: Script, messages: ReadonlyArray<WireMessage>) => {
  const index = messages.filter((m) => m.role === "assistant").length
  return { index, turn: script.turns[Math.min(index, script.turns.length - 1)] }
}

/** `"key": "value"`, `key: value` and `key=value` pairs of a prompt. */
export const variablesOf = (text: string): Record<string, string> => {
  const vars: Record<string, string> = {}
  for (const m of text.matchAll(/"?([A-Za-z_][\w.-]*)"?\s*[:=]\s*"?([^",\n}\]]*)"?/g)) {
    const value = m[2]?.trim() ?? ""
    if (m[1] !== undefined && value !== "" && !(m[1] in vars)) vars[m[1]] = value
  }
  return vars
}

/** Fills `{{name|fallback}}` placeholders in every string of a JSON value. */
export const fill = (value: unknown, vars: Record<string, string>): unknown => {
  if (typeof value === "string") {
    return value.replace(/\{\{\s*([\w.-]+)\s*(?:\|([^}]*))?\}\}/g, (_, name: string, fallback?: string) => vars[name] ?? fallback ?? "")
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, vars))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]))
  }
  return value
}

/**
 * The local platform's default: look at the pods of the incident's namespace, read the failing resource, then
 * answer with a root cause and a workflow. The agent maps this answer onto its result; replace it with `setScripts`.
 */
export const defaultInvestigation: Script = {
  name: "default-investigation",
  turns: [
    {
      text: "Listing pods in the affected namespace.",
      toolCalls: [{ name: "cluster_list", arguments: { kind: "Pod", api_version: "v1", namespace: "{{resource_namespace|default}}" } }]
    },
    {
      toolCalls: [{
        name: "cluster_get",
        arguments: {
          kind: "{{resource_kind|Pod}}",
          api_version: "{{resource_api_version|v1}}",
          namespace: "{{resource_namespace|default}}",
          name: "{{resource_name|unknown}}"
        }
      }]
    },
    {
      json: {
        root_cause: "Container {{resource_name|unknown}} is restarting: the process exits after running out of memory",
        analysis:
          "The {{resource_kind|Pod}} {{resource_namespace|default}}/{{resource_name|unknown}} is in CrashLoopBackOff; the last termination reason is OOMKilled.",
        root_cause_analysis: {
          summary: "Memory limit too low for the workload",
          severity: "{{severity|high}}",
          contributing_factors: ["memory limit reached", "repeated restarts"]
        },
        confidence: 0.9,
        investigation_outcome: "actionable",
        actionable: true,
        selected_workflow: {
          workflow_id: "{{workflow_id|restart-pod}}",
          confidence: 0.9,
          rationale: "Restarting clears the crash loop while the limit is reviewed",
          parameters: { NAMESPACE: "{{resource_namespace|default}}", POD_NAME: "{{resource_name|unknown}}" }
        },
        detected_labels: {}
      }
    }
  ]
}

export const defaultScripts: ReadonlyArray<Script> = [defaultInvestigation]

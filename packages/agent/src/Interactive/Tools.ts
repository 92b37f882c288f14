/**
 * The three interactive MCP tools (`<prefix>_investigate`, `<prefix>_select_workflow`,
 * `<prefix>_complete_no_action`), their flat input schemas (the original's, with the actions spelled out) and the
 * dispatch to the interactive investigations.
 */
import { Effect, JSONSchema, Option, ParseResult, Schema } from "effect"
import { ToolError } from "@kubemend/core/ToolError"
import type { Acting, Caller } from "./Callers.ts"
import type { Autonomous } from "./Autonomous.ts"
import type { Investigations } from "./Investigations.ts"

const opt = <S extends Schema.Schema.All>(s: S) => Schema.optionalWith(s, { exact: true })
const RrId = Schema.String.pipe(Schema.pattern(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/))
const Name = Schema.String.pipe(Schema.maxLength(253))
const Text = Schema.String.pipe(Schema.maxLength(10240))
const actor = { acting_user: opt(Name), acting_user_groups: opt(Schema.Array(Name).pipe(Schema.maxItems(64))) }

export const Actions = [
  "start",
  "message",
  "complete",
  "cancel",
  "takeover",
  "status",
  "reconnect",
  "discover_workflows",
  "start_autonomous",
  "follow"
] as const

export const InvestigateInput = Schema.Struct({
  rr_id: RrId,
  action: Schema.Literal(...Actions),
  session_id: opt(Name),
  message: opt(Text),
  ...actor
})

export const SelectWorkflowInput = Schema.Struct({
  rr_id: RrId,
  workflow_id: Name,
  kind: opt(Name),
  name: opt(Name),
  namespace: opt(Name),
  api_version: opt(Name),
  spec_hash: opt(Name),
  incident_id: opt(Name),
  parameters: opt(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  ...actor
})

export const CompleteNoActionInput = Schema.Struct({
  rr_id: RrId,
  reason: opt(Text),
  escalation_reason: opt(Text),
  ...actor
})

const inputSchema = (s: Schema.Schema.AnyNoContext) => {
  const { $schema: _s, ...rest } = JSONSchema.make(s) as unknown as Record<string, unknown>
  return rest
}

export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
}

export const toolSpecs = (prefix: string): ReadonlyArray<ToolSpec> => [
  {
    name: `${prefix}_investigate`,
    description: "Investigate a remediation request interactively. Actions: start, takeover, message (needs message), " +
      "complete, cancel, status, reconnect, discover_workflows; follow waits (acting on nothing) until the current turn " +
      "answered, streaming its events, then answers the status (an answered turn reads analysis: answered); start_autonomous starts an autonomous investigation " +
      "of an existing remediation request instead (no session is held; poll its session_id).",
    inputSchema: inputSchema(InvestigateInput)
  },
  {
    name: `${prefix}_select_workflow`,
    description: "Select a remediation workflow from this session's discover_workflows results; records it on the " +
      "session's RemediationRequest (created from kind/name/namespace when the session has none).",
    inputSchema: inputSchema(SelectWorkflowInput)
  },
  {
    name: `${prefix}_complete_no_action`,
    description: "Complete an interactive investigation without a workflow. With escalation_reason it is escalated " +
      "to human review instead.",
    inputSchema: inputSchema(CompleteNoActionInput)
  }
]

/**
 * Who acts: the verified caller of the request; or, only for the gateway's ServiceAccount, the tool's
 * `acting_user` argument. An `acting_user` from anyone else (or naming someone other than a verified caller) is
 * ignored and audited.
 */
const actingCaller = (acting: Acting, args: { acting_user?: string; acting_user_groups?: ReadonlyArray<string> }) =>
  Effect.gen(function* () {
    const named = args.acting_user?.trim()
    const claimed = named === undefined || named === "" ? undefined : named
    if (Option.isSome(acting.caller)) {
      if (claimed !== undefined && claimed !== acting.caller.value.user) yield* acting.ignored("acting_user", claimed)
      return acting.caller.value
    }
    if (claimed !== undefined && acting.delegate) {
      return { user: claimed, groups: args.acting_user_groups ?? [], via: "gateway" } satisfies Caller
    }
    if (claimed !== undefined) yield* acting.ignored("acting_user", claimed)
    return yield* new ToolError({
      message: "no acting user: send a bearer JWT of a trusted issuer, or call through the gateway"
    })
  })

const decode = <A, I>(schema: Schema.Schema<A, I>, raw: unknown) =>
  Effect.mapError(
    Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(raw ?? {}),
    (e) => new ToolError({ message: `invalid arguments: ${ParseResult.TreeFormatter.formatErrorSync(e)}` })
  )

/** The rr a call is about (for progress forwarding), without validating anything else. */
export const rrOf = (raw: unknown) => {
  const rr = (raw as { rr_id?: unknown } | undefined)?.rr_id
  return typeof rr === "string" ? Option.some(rr) : Option.none()
}

export const dispatch =
  (investigations: Investigations, autonomous: Autonomous, prefix: string) =>
  (name: string, raw: unknown, caller: Acting): Effect.Effect<unknown, ToolError> | undefined => {
    switch (name) {
      case `${prefix}_investigate`:
        return Effect.gen(function* () {
          const a = yield* decode(InvestigateInput, raw)
          if (a.action === "status") return yield* investigations.status(a.rr_id)
          if (a.action === "follow") return yield* investigations.follow(a.rr_id)
          const who = yield* actingCaller(caller, a)
          switch (a.action) {
            case "start":
              return yield* investigations.start(a.rr_id, who)
            case "takeover":
              return yield* investigations.takeover(a.rr_id, who)
            case "message":
              if (a.message === undefined || a.message.trim() === "") return yield* new ToolError({ message: "action message needs message" })
              return yield* investigations.send(a.rr_id, who, a.message)
            case "complete":
              return yield* investigations.complete(a.rr_id, who)
            case "cancel":
              return yield* investigations.cancel(a.rr_id, who)
            case "reconnect":
              return yield* investigations.reconnect(a.rr_id, who)
            case "discover_workflows":
              return yield* investigations.discover(a.rr_id, who)
            case "start_autonomous":
              return yield* autonomous.start(a.rr_id, who)
          }
        })
      case `${prefix}_select_workflow`:
        return Effect.gen(function* () {
          const a = yield* decode(SelectWorkflowInput, raw)
          const who = yield* actingCaller(caller, a)
          const target = a.kind !== undefined && a.name !== undefined
            ? {
              kind: a.kind,
              name: a.name,
              ...(a.namespace === undefined ? {} : { namespace: a.namespace }),
              ...(a.api_version === undefined ? {} : { apiVersion: a.api_version })
            }
            : undefined
          return yield* investigations.select(a.rr_id, who, { workflowId: a.workflow_id, parameters: a.parameters ?? {}, target })
        })
      case `${prefix}_complete_no_action`:
        return Effect.gen(function* () {
          const a = yield* decode(CompleteNoActionInput, raw)
          const who = yield* actingCaller(caller, a)
          return yield* investigations.completeNoAction(a.rr_id, who, a.reason, a.escalation_reason)
        })
      default:
        return undefined
    }
  }

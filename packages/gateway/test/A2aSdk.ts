/** The official `@a2a-js/sdk` client against a test gateway, in either protocol mode, and helpers to read what it got. */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { type AgentCard, Role, type StreamResponse, type Task } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { type TestGateway, withToken } from "./A2aHarness.ts"

export type Mode = "1.0" | "0.3"

/** A client of the official SDK; `methods` records the JSON-RPC methods it sent. */
export const clientFor = (gw: TestGateway, bearer: string, mode: Mode) =>
  Effect.promise(async () => {
    const methods: Array<string> = []
    const authed = withToken(bearer)
    const fetchImpl: typeof fetch = (input, init) => {
      if (typeof init?.body === "string") methods.push(JSON.parse(init.body).method)
      return authed(input, init)
    }
    const legacyCompat = { enabled: mode === "0.3" }
    const cardResolver = new DefaultAgentCardResolver({ fetchImpl: authed, legacyCompat })
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
      cardResolver
    }))
    if (mode === "1.0") return { client: await factory.createFromUrl(gw.url), methods }
    // An A2A 0.3 client reads only the card's 0.3 fields (`url`, `protocolVersion`, `preferredTransport`).
    const { supportedInterfaces: _, ...card } = await (await authed(`${gw.url}/.well-known/agent-card.json`)).json()
    return { client: await factory.createFromAgentCard(card as AgentCard), methods }
  })

const userMessage = (text: string, contextId = "") => ({
  messageId: randomUUID(),
  contextId,
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

export const request = (text: string, options: { contextId?: string; returnImmediately?: boolean } = {}) => ({
  tenant: "",
  message: userMessage(text, options.contextId),
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: undefined,
    returnImmediately: options.returnImmediately ?? false
  },
  metadata: undefined
})

export const send = (client: Client, text: string, options: { contextId?: string; returnImmediately?: boolean } = {}) =>
  Effect.promise(async () => (await client.sendMessage(request(text, options))) as Task)

export const stream = (client: Client, text: string) =>
  Effect.promise(async () => {
    const events: Array<StreamResponse> = []
    for await (const e of client.sendMessageStream(request(text))) events.push(e)
    return events
  })

export const textOf = (task: Task) => task.status?.message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("") ?? ""

export const statusUpdates = (events: ReadonlyArray<StreamResponse>) => events.flatMap((e) => (e.payload?.$case === "statusUpdate" ? [e.payload.value] : []))

/** The tool message the model got back for its first tool call (second LLM request of the conversation). */
export const toolReply = (gw: TestGateway, userText: string) => {
  const req = gw.llm.requests.find((r) =>
    r.body?.messages?.some((m: any) => m.role === "tool") && r.body.messages.find((m: any) => m.role === "user")?.content.includes(userText)
  )
  return String(req?.body.messages.find((m: any) => m.role === "tool")?.content ?? "")
}

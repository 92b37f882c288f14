/**
 * A2A-specific JSON-RPC errors that the core table does not have yet (A2A spec codes). The lead may move them into
 * core Errors.ts / Wire.ts; until then their codes live here.
 */
import { Schema } from "effect"

export class PushNotificationNotSupported extends Schema.TaggedError<PushNotificationNotSupported>()(
  "PushNotificationNotSupported",
  { method: Schema.String }
) {}

export class UnsupportedOperation extends Schema.TaggedError<UnsupportedOperation>()("UnsupportedOperation", {
  method: Schema.String
}) {}

export const a2aErrorObject = (e: PushNotificationNotSupported | UnsupportedOperation) =>
  e._tag === "PushNotificationNotSupported"
    ? { code: -32003, message: "Push Notification Not Supported", data: { tag: e._tag, detail: `${e.method}: push notifications are not supported` } }
    : { code: -32004, message: "Unsupported Operation", data: { tag: e._tag, detail: `${e.method} is not supported by this agent` } }

/**
 * Counts the commands the gateway's Valkey connections send, by name, from inside this process: the number of
 * round trips a request makes does not depend on the machine, and, unlike the server's `INFO commandstats`, it is
 * not mixed with other clients of the same server. ioredis sends every command (scripts too) through
 * `Redis.prototype.sendCommand`, which this wraps once.
 */
import { createRequire } from "node:module"

/** The gateway's ioredis (its own dependency), the same module instance its stores use. */
const ioredis = createRequire(new URL("../../packages/gateway/package.json", import.meta.url))("ioredis") as {
  Redis: { prototype: { sendCommand: (this: Sender, command: { name: string }, ...rest: Array<unknown>) => unknown } }
}
interface Sender {
  readonly options: { readonly connectionName?: string }
}

const counts = new Map<string, number>()
const original = ioredis.Redis.prototype.sendCommand
ioredis.Redis.prototype.sendCommand = function (this: Sender, command, ...rest) {
  if (this.options.connectionName?.startsWith("kubemend-gateway") === true) counts.set(command.name, (counts.get(command.name) ?? 0) + 1)
  return original.call(this, command, ...rest)
}

/** The commands sent so far, by name. */
export const valkeyCommands = (): ReadonlyMap<string, number> => new Map(counts)

/** What was sent between two readings, by name. */
export const commandsBetween = (before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>) =>
  new Map([...after].map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const).filter(([, n]) => n > 0))

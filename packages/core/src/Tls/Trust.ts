/**
 * How a process trusts the platform's CA for its calls to the other services: `tls.caFile` in the service's config
 * (the CA bundle mounted from a Secret in a cluster, `.local/tls/ca.crt` locally) is added to the system roots on
 * undici's global dispatcher, which `fetch`, `FetchHttpClient` and `PlatformHttpClient` all use, and to node:https's
 * global agent. Certificates are
 * always verified; there is no switch to skip it.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import * as Https from "node:https"
import * as Tls from "node:tls"
import { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from "undici"
import { caFileConfig } from "../ServerConfig.ts"

/** A dispatcher trusting the system roots plus `authorities` (PEM). */
export const trustingDispatcher = (authorities: ReadonlyArray<string>) => new Agent({ connect: { ca: [...Tls.rootCertificates, ...authorities] } })

const trusted = new Map<string, string>()

/**
 * Makes every HTTP client of this process trust `pem` (one or more CA certificates) besides the system roots, under
 * `name`: trusting again under the same name replaces what it trusted (the operator trusts each platform's CA).
 */
export const trustAuthority = (name: string, pem: string): void => {
  if (trusted.get(name) === pem) return
  trusted.set(name, pem)
  setGlobalDispatcher(trustingDispatcher([...trusted.values()]))
  // node:https requests without an agent of their own (the console's proxy) trust the same.
  Https.globalAgent.options.ca = [...Tls.rootCertificates, ...trusted.values()]
}

/** Reads `tls.caFile` from the service's config and, when set, trusts it (a missing file stops the start). */
export const trustConfiguredAuthority = Effect.gen(function* () {
  const caFile = yield* caFileConfig
  if (Option.isNone(caFile)) return
  const pem = yield* Effect.try({
    try: () => Fs.readFileSync(caFile.value, "utf8"),
    catch: (e) => new Error(`tls.caFile: cannot read ${caFile.value}: ${(e as Error).message}`)
  })
  trustAuthority("tls.caFile", pem)
})

/**
 * Hands each request to the global dispatcher of the moment. `trustAuthority` replaces the global dispatcher, and
 * the operator trusts a platform's CA only once it has issued it, after its clients were built: a client holding the
 * dispatcher of its start would never trust that CA.
 */
class CurrentGlobalDispatcher extends Dispatcher {
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return getGlobalDispatcher().dispatch(options, handler)
  }
}

/** The undici HttpClient on the global dispatcher, so calls to other services trust the platform's CA. */
export const PlatformHttpClient = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(
  Layer.provide(Layer.sync(NodeHttpClient.Dispatcher, () => new CurrentGlobalDispatcher()))
)

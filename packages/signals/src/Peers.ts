/**
 * The client address (core `TrustedProxies`: `X-Forwarded-For` only from `trustedProxyCIDRs`) and CORS: a browser
 * `Origin` must be one of `corsAllowedOrigins`.
 */
import { makeTrustedProxies } from "@kubemend/core/TrustedProxies"

export const makePeers = (trustedProxyCIDRs: ReadonlyArray<string>, corsAllowedOrigins: ReadonlyArray<string>) => {
  const origins = new Set(corsAllowedOrigins)
  return {
    clientIp: makeTrustedProxies(trustedProxyCIDRs).clientIp,
    /** `undefined`: no Origin (not a browser) or an allowed one; otherwise the refused origin. */
    refusedOrigin: (origin: string | undefined) => (origin === undefined || origins.has(origin) ? undefined : origin),
    allowsOrigin: (origin: string | undefined) => origin !== undefined && origins.has(origin)
  }
}

/**
 * The client address as logs and audit should see it: the socket's peer, or — only when that peer is inside
 * `trustedProxyCIDRs` — the right-most `X-Forwarded-For` hop that is not itself a trusted proxy. And CORS: a
 * browser `Origin` must be one of `corsAllowedOrigins`.
 */
import { BlockList, isIP } from "node:net"

export const makePeers = (trustedProxyCIDRs: ReadonlyArray<string>, corsAllowedOrigins: ReadonlyArray<string>) => {
  const trusted = new BlockList()
  for (const cidr of trustedProxyCIDRs) {
    const [address, bits] = cidr.split("/")
    const family = isIP(address ?? "") === 6 ? "ipv6" : "ipv4"
    if (bits === undefined) trusted.addAddress(address!, family)
    else trusted.addSubnet(address!, Number(bits), family)
  }
  const isTrusted = (ip: string) => {
    const plain = ip.replace(/^::ffff:/, "")
    const family = isIP(plain)
    return family !== 0 && trusted.check(plain, family === 6 ? "ipv6" : "ipv4")
  }
  const origins = new Set(corsAllowedOrigins)
  return {
    clientIp: (remote: string | undefined, forwardedFor: string | undefined): string | undefined => {
      if (remote === undefined || forwardedFor === undefined || !isTrusted(remote)) return remote
      const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => isIP(h) !== 0)
      for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(hops[i]!)) return hops[i]
      return hops[0] ?? remote
    },
    /** `undefined`: no Origin (not a browser) or an allowed one; otherwise the refused origin. */
    refusedOrigin: (origin: string | undefined) => (origin === undefined || origins.has(origin) ? undefined : origin),
    allowsOrigin: (origin: string | undefined) => origin !== undefined && origins.has(origin)
  }
}

/**
 * The client address as logs, audit and per-IP limits should see it: the socket's peer, or — only when that peer is
 * inside `trustedProxyCIDRs` (the console proxy, an ingress, a Route) — the right-most `X-Forwarded-For` hop that is
 * not itself a trusted proxy. A forwarded header from anyone else is ignored. IPv4-mapped IPv6 reads as IPv4.
 */
import { BlockList, isIP } from "node:net"

const plain = (ip: string) => ip.replace(/^::ffff:/, "")

export const makeTrustedProxies = (trustedProxyCIDRs: ReadonlyArray<string>) => {
  const trusted = new BlockList()
  for (const cidr of trustedProxyCIDRs) {
    const [address, bits] = cidr.split("/")
    const family = isIP(address ?? "") === 6 ? "ipv6" : "ipv4"
    if (bits === undefined) trusted.addAddress(address!, family)
    else trusted.addSubnet(address!, Number(bits), family)
  }
  const isTrusted = (ip: string) => {
    const family = isIP(plain(ip))
    return family !== 0 && trusted.check(plain(ip), family === 6 ? "ipv6" : "ipv4")
  }
  return {
    clientIp: (remote: string | undefined, forwardedFor: string | undefined): string | undefined => {
      if (remote === undefined || forwardedFor === undefined || !isTrusted(remote)) return remote === undefined ? undefined : plain(remote)
      const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => isIP(h) !== 0)
      for (let i = hops.length - 1; i >= 0; i--) if (!isTrusted(hops[i]!)) return plain(hops[i]!)
      return plain(hops[0] ?? remote)
    }
  }
}

import { X509Certificate } from "node:crypto"
import { describe, expect, it, vi } from "vitest"

// The serial is 16 random bytes; about 1 draw in 512 starts with 0x00 then a byte below 0x80, which a hand-written
// DER encoder leaves non-minimal and OpenSSL refuses. The draw is pinned to that case here.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  const unlucky = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i === 0 ? 0 : i)))
  return { ...actual, default: { ...actual, randomBytes: unlucky }, randomBytes: unlucky }
})

const { generateTls } = await import("../src/kube/Tls.ts")

describe("TLS material", () => {
  it("makes certificates OpenSSL accepts when the random serial starts with a zero byte", async () => {
    const tls = await generateTls(["127.0.0.1", "localhost"])
    const ca = new X509Certificate(tls.caPem)
    const cert = new X509Certificate(tls.certPem)
    expect(cert.verify(ca.publicKey)).toBe(true)
    expect(cert.serialNumber).toBe("0102030405060708090A0B0C0D0E0F")
  })
})

/**
 * A throwaway CA and a server certificate signed by it, for serving HTTPS without a new dependency: node's crypto
 * makes the keys and signatures, and the few X.509 structures are DER-encoded here (ECDSA P-256, SHA-256).
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import { isIP } from "node:net"

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n])
  const bytes: Array<number> = []
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}

const tlv = (tag: number, ...content: Array<Buffer>): Buffer => {
  const body = Buffer.concat(content)
  return Buffer.concat([Buffer.from([tag]), length(body.length), body])
}

const seq = (...items: Array<Buffer>) => tlv(0x30, ...items)

const oid = (dotted: string): Buffer => {
  const [a, b, ...rest] = dotted.split(".").map(Number)
  const bytes = [a! * 40 + b!]
  for (const arc of rest) {
    const groups: Array<number> = []
    for (let v = arc; ; v = Math.floor(v / 128)) {
      groups.unshift(v % 128)
      if (v < 128) break
    }
    bytes.push(...groups.map((g, i) => (i < groups.length - 1 ? g | 0x80 : g)))
  }
  return tlv(0x06, Buffer.from(bytes))
}

const integer = (value: Buffer): Buffer => tlv(0x02, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value)
const bitString = (value: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), value)
const octets = (value: Buffer) => tlv(0x04, value)
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"))
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]))

const utcTime = (d: Date): Buffer => {
  const p = (n: number) => String(n).padStart(2, "0")
  const text = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}` +
    `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`
  return tlv(0x17, Buffer.from(text, "ascii"))
}

const name = (cn: string) => seq(tlv(0x31, seq(oid("2.5.4.3"), utf8(cn))))
const ecdsaSha256 = seq(oid("1.2.840.10045.4.3.2"))
const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value))

/** dNSName [2] and iPAddress [7] entries; IPv6 hosts are left out (the server listens on IPv4 loopback). */
const subjectAltName = (hosts: ReadonlyArray<string>) =>
  seq(
    ...hosts
      .filter((h) => isIP(h) !== 6)
      .map((h) => (isIP(h) === 4 ? tlv(0x87, Buffer.from(h.split(".").map(Number))) : tlv(0x82, Buffer.from(h, "ascii"))))
  )

interface CertInput {
  readonly subject: string
  readonly issuer: string
  readonly publicKey: KeyObject
  readonly signer: KeyObject
  readonly ca: boolean
  readonly hosts: ReadonlyArray<string>
}

const certificate = (c: CertInput): string => {
  const notBefore = new Date(Date.now() - 60_000)
  const notAfter = new Date(Date.now() + 365 * 24 * 3600_000)
  const extensions = c.ca
    ? [
        extension("2.5.29.19", true, seq(bool(true))),
        extension("2.5.29.15", true, bitString(Buffer.from([0x86]), 1))
      ]
    : [
        extension("2.5.29.19", true, seq()),
        extension("2.5.29.15", true, bitString(Buffer.from([0xa0]), 5)),
        extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))),
        extension("2.5.29.17", false, subjectAltName(c.hosts))
      ]
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(randomBytes(16)),
    ecdsaSha256,
    name(c.issuer),
    seq(utcTime(notBefore), utcTime(notAfter)),
    name(c.subject),
    c.publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, seq(...extensions))
  )
  const der = seq(tbs, ecdsaSha256, bitString(sign("sha256", tbs, c.signer)))
  const body = der.toString("base64").match(/.{1,64}/g)!.join("\n")
  return `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`
}

export interface TlsMaterial {
  readonly caPem: string
  readonly certPem: string
  readonly keyPem: string
}

/** A CA plus a server certificate for `hosts` (DNS names and IPv4 addresses). */
export const generateTls = (hosts: ReadonlyArray<string>): TlsMaterial => {
  const ca = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const server = generateKeyPairSync("ec", { namedCurve: "P-256" })
  const caPem = certificate({ subject: "devkube-ca", issuer: "devkube-ca", publicKey: ca.publicKey, signer: ca.privateKey, ca: true, hosts: [] })
  const certPem = certificate({
    subject: "devkube-apiserver",
    issuer: "devkube-ca",
    publicKey: server.publicKey,
    signer: ca.privateKey,
    ca: false,
    hosts: [...new Set(hosts)]
  })
  const keyPem = server.privateKey.export({ type: "pkcs8", format: "pem" }) as string
  return { caPem, certPem, keyPem }
}

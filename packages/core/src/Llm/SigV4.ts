/**
 * AWS Signature Version 4 for one request (header form), on node:crypto. Enough for Bedrock's JSON APIs.
 */
import { createHash, createHmac } from "node:crypto"

export interface AwsCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
}

export interface SignInput {
  readonly method: string
  readonly url: URL
  /** Headers to send and sign besides `host`, `x-amz-date` and `x-amz-security-token` (added here). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly region: string
  readonly service: string
  readonly credentials: AwsCredentials
  readonly now: Date
}

const sha256 = (data: string) => createHash("sha256").update(data, "utf8").digest("hex")
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data, "utf8").digest()

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves `!'()*` alone). */
const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** Non-S3 services sign the path with every (already encoded) segment encoded once more. */
const canonicalUri = (url: URL) => url.pathname.split("/").map(encode).join("/") || "/"

const canonicalQuery = (url: URL) =>
  [...url.searchParams.entries()]
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join("&")

/** The headers to send: the given ones plus `x-amz-date`, the session token and `authorization`. */
export const signV4 = (input: SignInput): Record<string, string> => {
  const amzDate = input.now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "")
  const day = amzDate.slice(0, 8)
  const extra: Record<string, string> = {
    ...input.headers,
    "x-amz-date": amzDate,
    ...(input.credentials.sessionToken === undefined ? {} : { "x-amz-security-token": input.credentials.sessionToken })
  }
  const signed = Object.entries({ ...extra, host: input.url.host })
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
  const signedHeaders = signed.map(([k]) => k).join(";")
  const canonicalRequest = [
    input.method,
    canonicalUri(input.url),
    canonicalQuery(input.url),
    signed.map(([k, v]) => `${k}:${v}\n`).join(""),
    signedHeaders,
    sha256(input.body)
  ].join("\n")
  const scope = `${day}/${input.region}/${input.service}/aws4_request`
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n")
  const key = hmac(hmac(hmac(hmac(`AWS4${input.credentials.secretAccessKey}`, day), input.region), input.service), "aws4_request")
  const signature = createHmac("sha256", key).update(stringToSign, "utf8").digest("hex")
  return {
    ...extra,
    authorization:
      `AWS4-HMAC-SHA256 Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
  }
}

/** AWS Signature Version 4 for one request (header form), by aws4fetch. Enough for Bedrock's JSON APIs. */
import { AwsV4Signer } from "aws4fetch"

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

/** The headers to send: the given ones plus `x-amz-date`, the session token and `authorization`. */
export const signV4 = async (input: SignInput): Promise<Record<string, string>> => {
  const signed = await new AwsV4Signer({
    method: input.method,
    url: input.url.href,
    headers: { ...input.headers },
    body: input.body,
    accessKeyId: input.credentials.accessKeyId,
    secretAccessKey: input.credentials.secretAccessKey,
    ...(input.credentials.sessionToken === undefined ? {} : { sessionToken: input.credentials.sessionToken }),
    region: input.region,
    service: input.service,
    datetime: input.now.toISOString().replace(/[-:]|\.\d{3}/g, ""),
    // Sign every header we send (aws4fetch leaves content-type out by default); AWS accepts any set with host.
    allHeaders: true
  }).sign()
  return Object.fromEntries(signed.headers)
}

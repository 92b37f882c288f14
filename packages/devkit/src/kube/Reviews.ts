/** SubjectAccessReview / LocalSubjectAccessReview / TokenReview, and the ServiceAccount tokens the server knows. */
import { randomBytes } from "node:crypto"
import type { Authorizer } from "./Rbac.ts"
import { badRequest } from "./Status.ts"
import type { Store } from "./Store.ts"

export interface TokenUser {
  readonly username: string
  readonly uid?: string
  readonly groups: ReadonlyArray<string>
  /** When set, a TokenReview must ask for one of these audiences. */
  readonly audiences?: ReadonlyArray<string>
}

export interface ServiceAccountTokenOptions {
  readonly audiences?: ReadonlyArray<string>
  /** Use this token text instead of minting one. */
  readonly token?: string
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** Registered tokens. SA tokens are shaped like the kubelet's projected JWTs but only TokenReview vouches for them. */
export class Tokens {
  private readonly users = new Map<string, TokenUser>()

  constructor(private readonly store: Store) {}

  registerServiceAccount(namespace: string, name: string, options: ServiceAccountTokenOptions = {}): string {
    const username = `system:serviceaccount:${namespace}:${name}`
    const sa = this.store.get("/serviceaccounts", namespace, name)
    const iat = Math.floor(Date.now() / 1000)
    const token = options.token ?? [
      b64url({ alg: "RS256", kid: "devkube" }),
      b64url({
        iss: "https://kubernetes.default.svc.cluster.local",
        sub: username,
        aud: options.audiences ?? ["https://kubernetes.default.svc.cluster.local"],
        iat,
        exp: iat + 3600,
        "kubernetes.io": { namespace, serviceaccount: { name, uid: sa?.metadata.uid ?? "" } }
      }),
      randomBytes(32).toString("base64url")
    ].join(".")
    this.users.set(token, {
      username,
      ...(sa?.metadata.uid === undefined ? {} : { uid: sa.metadata.uid }),
      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`],
      ...(options.audiences === undefined ? {} : { audiences: options.audiences })
    })
    return token
  }

  register(token: string, user: TokenUser): void {
    this.users.set(token, user)
  }

  revoke(token: string): void {
    this.users.delete(token)
  }

  lookup(token: string): TokenUser | undefined {
    return this.users.get(token)
  }
}

type Body = Record<string, unknown>
const record = (v: unknown): Body => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Body) : {})
const strings = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.filter((x) => typeof x === "string") : [])
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** Answers (Local)SubjectAccessReview bodies; `namespace` is set for the local variant. */
export const subjectAccessReview = (authorizer: Authorizer, body: unknown, localNamespace?: string) => {
  const review = record(body)
  const spec = record(review["spec"])
  const user = str(spec["user"]) ?? ""
  const groups = strings(spec["groups"])
  if (user === "" && groups.length === 0) throw badRequest("at least one of user or group must be specified")
  const ra = spec["resourceAttributes"] === undefined ? undefined : record(spec["resourceAttributes"])
  const nra = record(spec["nonResourceAttributes"])
  if (ra === undefined && spec["nonResourceAttributes"] === undefined) {
    throw badRequest("exactly one of nonResourceAttributes or resourceAttributes must be specified")
  }
  const namespace = localNamespace ?? str(ra?.["namespace"])
  const decision = authorizer.authorize(
    ra === undefined
      ? { user, groups, verb: str(nra["verb"]) ?? "", path: str(nra["path"]) ?? "" }
      : {
        user,
        groups,
        verb: str(ra["verb"]) ?? "",
        group: str(ra["group"]) ?? "",
        resource: str(ra["resource"]) ?? "",
        ...(namespace === undefined ? {} : { namespace }),
        ...(str(ra["subresource"]) === undefined ? {} : { subresource: str(ra["subresource"])! }),
        ...(str(ra["name"]) === undefined ? {} : { name: str(ra["name"])! })
      }
  )
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: localNamespace === undefined ? "SubjectAccessReview" : "LocalSubjectAccessReview",
    metadata: { creationTimestamp: null, ...(localNamespace === undefined ? {} : { namespace: localNamespace }) },
    spec,
    status: { allowed: decision.allowed, reason: decision.reason }
  }
}

export const tokenReview = (tokens: Tokens, body: unknown) => {
  const spec = record(record(body)["spec"])
  const token = str(spec["token"]) ?? ""
  const wanted = strings(spec["audiences"])
  const user = tokens.lookup(token)
  const reply = (status: Body) => ({
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    metadata: { creationTimestamp: null },
    spec,
    status
  })
  if (user === undefined) return reply({ authenticated: false, user: {}, error: "invalid bearer token" })
  const granted = user.audiences === undefined ? wanted : wanted.length === 0 ? user.audiences : wanted.filter((a) => user.audiences!.includes(a))
  if (wanted.length > 0 && granted.length === 0) {
    return reply({ authenticated: false, user: {}, error: "token audiences are invalid for the target audiences" })
  }
  return reply({
    authenticated: true,
    user: {
      username: user.username,
      ...(user.uid === undefined ? {} : { uid: user.uid }),
      groups: [...user.groups, "system:authenticated"]
    },
    audiences: granted
  })
}

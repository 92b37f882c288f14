/**
 * How callers authenticate to the storage API: a Kubernetes ServiceAccount bearer token, validated by TokenReview
 * on the server. The middleware provides the reviewed caller to handlers (legal hold `placed_by`, export
 * `exported_by`).
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { ForbiddenProblem, ServiceUnavailableProblem, UnauthorizedProblem } from "../Problem.ts"

export interface StorageCallerShape {
  /** TokenReview username, e.g. `system:serviceaccount:kubemend-system:gateway`. */
  readonly username: string
  readonly groups: ReadonlyArray<string>
}

export class StorageCaller extends Context.Tag("@kubemend/core/StorageApi/StorageCaller")<
  StorageCaller,
  StorageCallerShape
>() {}

/** 401 for a missing or rejected token; 403 when the endpoint's rule (core `EndpointAccess`) is not granted; 503 when the token cannot be reviewed (cluster API unreachable). */
export class StorageAuth extends HttpApiMiddleware.Tag<StorageAuth>()("@kubemend/core/StorageApi/StorageAuth", {
  failure: Schema.Union(UnauthorizedProblem, ForbiddenProblem, ServiceUnavailableProblem),
  provides: StorageCaller,
  security: { serviceAccount: HttpApiSecurity.bearer }
}) {}

/**
 * RFC 7807 problem bodies, one class per HTTP status so an `HttpApi` can declare them with `.addError(...)`.
 * They are plain classes (no `_tag` on the wire); `Wire.ts` decides which one a domain error becomes.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export const ProblemContentType = "application/problem+json"

export const ProblemFields = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Number,
  detail: Schema.optional(Schema.String),
  instance: Schema.optional(Schema.String)
}

export interface ProblemBody {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail?: string | undefined
  readonly instance?: string | undefined
}

// `status` is a literal per class: HttpApi encodes errors through a union of these classes, and the literal is what
// lets the union pick the class (and so the HTTP status) of each problem.
const fields = <const S extends number>(status: S) => ({ ...ProblemFields, status: Schema.Literal(status) })
const annotations = <A>(status: number) =>
  HttpApiSchema.annotations<A>({
    status,
    [HttpApiSchema.AnnotationEncoding]: { kind: "Json", contentType: ProblemContentType }
  })

export class BadRequestProblem extends Schema.Class<BadRequestProblem>("BadRequestProblem")(fields(400), annotations<BadRequestProblem>(400)) {}
export class UnauthorizedProblem extends Schema.Class<UnauthorizedProblem>("UnauthorizedProblem")(fields(401), annotations<UnauthorizedProblem>(401)) {}
export class ForbiddenProblem extends Schema.Class<ForbiddenProblem>("ForbiddenProblem")(fields(403), annotations<ForbiddenProblem>(403)) {}
export class NotFoundProblem extends Schema.Class<NotFoundProblem>("NotFoundProblem")(fields(404), annotations<NotFoundProblem>(404)) {}
export class NotAcceptableProblem extends Schema.Class<NotAcceptableProblem>("NotAcceptableProblem")(fields(406), annotations<NotAcceptableProblem>(406)) {}
export class ConflictProblem extends Schema.Class<ConflictProblem>("ConflictProblem")(fields(409), annotations<ConflictProblem>(409)) {}
export class PayloadTooLargeProblem
  extends Schema.Class<PayloadTooLargeProblem>("PayloadTooLargeProblem")(fields(413), annotations<PayloadTooLargeProblem>(413))
{}
export class UnsupportedMediaTypeProblem
  extends Schema.Class<UnsupportedMediaTypeProblem>("UnsupportedMediaTypeProblem")(fields(415), annotations<UnsupportedMediaTypeProblem>(415))
{}
export class TooManyRequestsProblem
  extends Schema.Class<TooManyRequestsProblem>("TooManyRequestsProblem")(fields(429), annotations<TooManyRequestsProblem>(429))
{}
export class HeadersTooLargeProblem
  extends Schema.Class<HeadersTooLargeProblem>("HeadersTooLargeProblem")(fields(431), annotations<HeadersTooLargeProblem>(431))
{}
export class InternalProblem extends Schema.Class<InternalProblem>("InternalProblem")(fields(500), annotations<InternalProblem>(500)) {}
export class NotImplementedProblem extends Schema.Class<NotImplementedProblem>("NotImplementedProblem")(fields(501), annotations<NotImplementedProblem>(501)) {}
export class ServiceUnavailableProblem
  extends Schema.Class<ServiceUnavailableProblem>("ServiceUnavailableProblem")(fields(503), annotations<ServiceUnavailableProblem>(503))
{}

export const ProblemByStatus = {
  400: BadRequestProblem,
  401: UnauthorizedProblem,
  403: ForbiddenProblem,
  404: NotFoundProblem,
  406: NotAcceptableProblem,
  409: ConflictProblem,
  413: PayloadTooLargeProblem,
  415: UnsupportedMediaTypeProblem,
  429: TooManyRequestsProblem,
  431: HeadersTooLargeProblem,
  500: InternalProblem,
  501: NotImplementedProblem,
  503: ServiceUnavailableProblem
} as const

export type ProblemStatus = keyof typeof ProblemByStatus
export type Problem = InstanceType<(typeof ProblemByStatus)[ProblemStatus]>

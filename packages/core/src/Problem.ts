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

const problemClass = <const Id extends string>(id: Id, status: number) =>
  Schema.Class<ProblemBody & { readonly _brand?: Id }>(id)(
    ProblemFields,
    HttpApiSchema.annotations({
      status,
      [HttpApiSchema.AnnotationEncoding]: { kind: "Json", contentType: ProblemContentType }
    })
  )

export class BadRequestProblem extends problemClass("BadRequestProblem", 400) {}
export class UnauthorizedProblem extends problemClass("UnauthorizedProblem", 401) {}
export class ForbiddenProblem extends problemClass("ForbiddenProblem", 403) {}
export class NotFoundProblem extends problemClass("NotFoundProblem", 404) {}
export class NotAcceptableProblem extends problemClass("NotAcceptableProblem", 406) {}
export class ConflictProblem extends problemClass("ConflictProblem", 409) {}
export class PayloadTooLargeProblem extends problemClass("PayloadTooLargeProblem", 413) {}
export class UnsupportedMediaTypeProblem extends problemClass("UnsupportedMediaTypeProblem", 415) {}
export class TooManyRequestsProblem extends problemClass("TooManyRequestsProblem", 429) {}
export class HeadersTooLargeProblem extends problemClass("HeadersTooLargeProblem", 431) {}
export class InternalProblem extends problemClass("InternalProblem", 500) {}
export class NotImplementedProblem extends problemClass("NotImplementedProblem", 501) {}
export class ServiceUnavailableProblem extends problemClass("ServiceUnavailableProblem", 503) {}

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

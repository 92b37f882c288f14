/**
 * The storage service's HTTP contract, declared once: the service implements it (`HttpApiBuilder.group`), the
 * gateway and agent call it (`HttpApiClient.make(StorageApi)`, wrapped by `Storage.ts`). All paths are under
 * `/api/v1`; every error is an RFC 7807 problem (`application/problem+json`).
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { BadRequestProblem, InternalProblem, PayloadTooLargeProblem, ServiceUnavailableProblem } from "./Problem.ts"
import { AuditGroup, ComplianceGroup, PublicGroup } from "./StorageApi/AuditGroups.ts"
import { ActionTypesGroup, WorkflowsGroup } from "./StorageApi/CatalogGroups.ts"

export * from "./StorageApi/Audit.ts"
export * from "./StorageApi/AuditGroups.ts"
export * from "./StorageApi/Auth.ts"
export * from "./StorageApi/Catalog.ts"
export * from "./StorageApi/CatalogGroups.ts"
export * from "./StorageApi/Compliance.ts"
export * from "./StorageApi/WorkflowContent.ts"

/** Where the service serves the OpenAPI 3.1 document of this contract. */
export const StorageOpenApiPath = "/api/v1/openapi.json" as const

export class StorageApi extends HttpApi.make("storage")
  .add(AuditGroup)
  .add(ComplianceGroup)
  .add(WorkflowsGroup)
  .add(ActionTypesGroup)
  .add(PublicGroup)
  .addError(BadRequestProblem)
  .addError(PayloadTooLargeProblem)
  .addError(InternalProblem)
  .addError(ServiceUnavailableProblem)
  .prefix("/api/v1")
  .annotateContext(
    OpenApi.annotations({
      title: "Kubemend storage API",
      version: "1.0.0",
      description: "Tamper-evident audit trail, workflow catalog and action-type taxonomy."
    })
  )
{}

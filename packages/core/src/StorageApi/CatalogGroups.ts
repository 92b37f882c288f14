/**
 * Endpoint declarations of the workflow catalog and action-type taxonomy (paths relative to `/api/v1`).
 * `/workflows/actions` is a static segment, so the router never hands it to `/workflows/:workflow_id`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Int, UuidString } from "../domain/Common.ts"
import { ConflictProblem, NotFoundProblem, ProblemContentType, ProblemFields } from "../Problem.ts"
import { AccessRule } from "../EndpointAccess/Rule.ts"
import { StorageAuth } from "./Auth.ts"
import {
  ActionTypeCreateRequest,
  ActionTypeCreated,
  ActionTypeDisableRequest,
  ActionTypeDisableResponse,
  ActionTypeExisting,
  ActionTypeListResponse,
  ActionTypeUpdateRequest,
  ActionTypeUpdateResponse,
  ActionTypeWorkflowCountResponse,
  CreateWorkflowRequest,
  DiscoveryQuery,
  RemediationWorkflow,
  SignalContext,
  WorkflowCreated,
  WorkflowDiscoveryResponse,
  WorkflowLifecycleRequest,
  WorkflowListQuery,
  WorkflowListResponse,
  WorkflowUnchanged,
  WorkflowUpdateRequest
} from "./Catalog.ts"

/**
 * 409 of `PATCH /action-types/{name}/disable`: active workflows still use the action type (or it is already
 * disabled). An RFC 7807 body with the original's extra members.
 */
export class ActionTypeDisableDeniedProblem extends Schema.Class<ActionTypeDisableDeniedProblem>(
  "ActionTypeDisableDeniedProblem"
)(
  {
    ...ProblemFields,
    status: Schema.Literal(409),
    actionType: Schema.String,
    dependentWorkflowCount: Int,
    dependentWorkflows: Schema.Array(Schema.String)
  },
  HttpApiSchema.annotations({
    status: 409,
    [HttpApiSchema.AnnotationEncoding]: { kind: "Json", contentType: ProblemContentType }
  })
) {}

const WorkflowPath = Schema.Struct({ workflow_id: UuidString })
const ActionTypePath = Schema.Struct({ action_type: Schema.String.pipe(Schema.minLength(1)) })
const NamePath = Schema.Struct({ name: Schema.String.pipe(Schema.minLength(1)) })

const lifecycle = <const Name extends string>(name: Name, verb: string) =>
  HttpApiEndpoint.patch(name, `/workflows/:workflow_id/${verb}`).annotate(AccessRule, AccessRule.write)
    .setPath(WorkflowPath)
    .setPayload(WorkflowLifecycleRequest)
    .addSuccess(RemediationWorkflow)
    .addError(NotFoundProblem)

export class WorkflowsGroup extends HttpApiGroup.make("workflows")
  .add(
    HttpApiEndpoint.post("createWorkflow", "/workflows").annotate(AccessRule, AccessRule.write)
      .setPayload(CreateWorkflowRequest)
      .addSuccess(WorkflowCreated, { status: 201 })
      .addSuccess(WorkflowUnchanged, { status: 200 })
      .addError(ConflictProblem)
  )
  .add(
    HttpApiEndpoint.get("listWorkflows", "/workflows").annotate(AccessRule, AccessRule.read).setUrlParams(WorkflowListQuery).addSuccess(WorkflowListResponse)
  )
  .add(
    HttpApiEndpoint.get("listAvailableActions", "/workflows/actions").annotate(AccessRule, AccessRule.read)
      .setUrlParams(DiscoveryQuery)
      .addSuccess(ActionTypeListResponse)
  )
  .add(
    HttpApiEndpoint.get("listWorkflowsByActionType", "/workflows/actions/:action_type").annotate(AccessRule, AccessRule.read)
      .setPath(ActionTypePath)
      .setUrlParams(DiscoveryQuery)
      .addSuccess(WorkflowDiscoveryResponse)
  )
  .add(
    HttpApiEndpoint.get("getWorkflowByID", "/workflows/:workflow_id").annotate(AccessRule, AccessRule.read)
      .setPath(WorkflowPath)
      .setUrlParams(SignalContext)
      .addSuccess(RemediationWorkflow)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.patch("updateWorkflow", "/workflows/:workflow_id").annotate(AccessRule, AccessRule.write)
      .setPath(WorkflowPath)
      .setPayload(WorkflowUpdateRequest)
      .addSuccess(RemediationWorkflow)
      .addError(NotFoundProblem)
  )
  .add(lifecycle("disableWorkflow", "disable"))
  .add(lifecycle("enableWorkflow", "enable"))
  .add(lifecycle("deprecateWorkflow", "deprecate"))
  .middleware(StorageAuth)
{}

export class ActionTypesGroup extends HttpApiGroup.make("actionTypes")
  .add(
    HttpApiEndpoint.post("createActionType", "/action-types").annotate(AccessRule, AccessRule.write)
      .setPayload(ActionTypeCreateRequest)
      .addSuccess(ActionTypeCreated, { status: 201 })
      .addSuccess(ActionTypeExisting, { status: 200 })
  )
  .add(
    HttpApiEndpoint.patch("updateActionType", "/action-types/:name").annotate(AccessRule, AccessRule.write)
      .setPath(NamePath)
      .setPayload(ActionTypeUpdateRequest)
      .addSuccess(ActionTypeUpdateResponse)
      .addError(NotFoundProblem)
  )
  .add(
    HttpApiEndpoint.patch("disableActionType", "/action-types/:name/disable").annotate(AccessRule, AccessRule.write)
      .setPath(NamePath)
      .setPayload(ActionTypeDisableRequest)
      .addSuccess(ActionTypeDisableResponse)
      .addError(NotFoundProblem)
      .addError(ActionTypeDisableDeniedProblem)
  )
  .add(
    HttpApiEndpoint.get("getActionTypeWorkflowCount", "/action-types/:name/workflow-count").annotate(AccessRule, AccessRule.read)
      .setPath(NamePath)
      .addSuccess(ActionTypeWorkflowCountResponse)
      .addError(NotFoundProblem)
  )
  .middleware(StorageAuth)
{}

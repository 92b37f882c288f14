/** Handlers of the workflow catalog, discovery and action-type endpoints. */
import { HttpApiBuilder } from "@effect/platform"
import {
  ActionTypeCreated,
  ActionTypeDisableDeniedProblem,
  ActionTypeExisting,
  StorageApi,
  WorkflowCreated,
  WorkflowUnchanged
} from "@kubemend/core/StorageApi"
import type { BadRequestProblem, NotFoundProblem, ServiceUnavailableProblem } from "@kubemend/core/Problem"
import { ProblemTypeBase } from "@kubemend/core/Wire"
import { Effect } from "effect"
import { ActionTypeRepo } from "../Db/ActionTypeRepo.ts"
import { DiscoveryRepo } from "../Db/DiscoveryRepo.ts"
import { WorkflowRepo } from "../Db/WorkflowRepo.ts"
import { wellFormed, wellFormedJson } from "../Normalise.ts"
import type { ActionTypeInUse } from "../Db/ActionTypeRepo.ts"
import { orProblem, problem, withStatus } from "./Problems.ts"

/** 409 with the dependent workflows, as the original's `ActionTypeDisableDeniedResponse` (but RFC 7807). */
const denied = (e: ActionTypeInUse) =>
  Effect.flatMap(ProblemTypeBase, (base) =>
    Effect.fail(
      new ActionTypeDisableDeniedProblem({
        type: `${base}/conflict`,
        title: "Conflict",
        status: 409,
        detail: e.detail,
        actionType: e.actionType,
        dependentWorkflowCount: e.dependentWorkflows.length,
        dependentWorkflows: e.dependentWorkflows
      })
    ))

export const WorkflowsHttp = HttpApiBuilder.group(StorageApi, "workflows", (handlers) =>
  Effect.gen(function* () {
    const workflows = yield* WorkflowRepo
    const discovery = yield* DiscoveryRepo
    return handlers
      .handle("createWorkflow", ({ payload }) =>
        // Lone surrogates would reach the jsonb copy of the parsed spec, which refuses them (see Normalise.ts).
        workflows.register({ ...payload, content: wellFormed(payload.content) }).pipe(
          Effect.map((r) => r._tag === "Created" ? withStatus(201)(new WorkflowCreated(r.workflow)) : withStatus(200)(new WorkflowUnchanged(r.workflow))),
          orProblem
        ))
      .handle("listWorkflows", ({ urlParams }) => workflows.list(urlParams).pipe(orProblem))
      .handle("listAvailableActions", ({ urlParams }) => discovery.listActions(urlParams).pipe(orProblem))
      .handle("listWorkflowsByActionType", ({ path, urlParams }) => discovery.listWorkflows(path.action_type, urlParams).pipe(orProblem))
      .handle("getWorkflowByID", ({ path, urlParams }) => workflows.get(path.workflow_id, urlParams).pipe(orProblem))
      .handle("updateWorkflow", ({ path, payload }) =>
        workflows.setStatus(path.workflow_id, payload.status, payload.disabledBy, payload.disabledReason).pipe(orProblem))
      .handle("disableWorkflow", ({ path, payload }) =>
        workflows.setStatus(path.workflow_id, "Disabled", payload.updatedBy, payload.reason).pipe(orProblem))
      .handle("enableWorkflow", ({ path, payload }) => workflows.setStatus(path.workflow_id, "Active", payload.updatedBy, payload.reason).pipe(orProblem))
      .handle(
        "deprecateWorkflow",
        ({ path, payload }) => workflows.setStatus(path.workflow_id, "Deprecated", payload.updatedBy, payload.reason).pipe(orProblem)
      )
  }))

export const ActionTypesHttp = HttpApiBuilder.group(StorageApi, "actionTypes", (handlers) =>
  Effect.gen(function* () {
    const actionTypes = yield* ActionTypeRepo
    return handlers
      .handle("createActionType", ({ payload }) =>
        actionTypes.create({ ...payload, description: wellFormedJson(payload.description) as typeof payload.description }).pipe(
          Effect.map((r) => (r.status === "created" ? withStatus(201)(new ActionTypeCreated(r)) : withStatus(200)(new ActionTypeExisting(r)))),
          orProblem
        ))
      .handle("updateActionType", ({ path, payload }) =>
        actionTypes.update(path.name, wellFormedJson(payload.description) as typeof payload.description, payload.updatedBy).pipe(orProblem))
      .handle("disableActionType", ({ path, payload }) =>
        actionTypes.disable(path.name, payload.disabledBy).pipe(
          Effect.catchAll((e): Effect.Effect<never, ActionTypeDisableDeniedProblem | BadRequestProblem | NotFoundProblem | ServiceUnavailableProblem> =>
            e._tag === "ActionTypeInUse" ? denied(e) : problem(e)
          )
        ))
      .handle("getActionTypeWorkflowCount", ({ path }) =>
        actionTypes.workflowCount(path.name).pipe(orProblem))
  }))

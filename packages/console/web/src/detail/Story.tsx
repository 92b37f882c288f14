/**
 * What a remediation's children say, as `svc_get_remediation` reports them: the analysis's root cause, the selected
 * workflow, the execution and the effectiveness component scores. A part not reached yet says so.
 */
import { DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, Label, Title } from "@patternfly/react-core"
import type { ReactNode } from "react"

interface RootCause {
  readonly summary: string
  readonly severity?: string
  readonly contributing_factors?: ReadonlyArray<string>
}

interface SelectedWorkflow {
  readonly workflow_id: string
  readonly name?: string
  readonly version?: string
  readonly action_type?: string
  readonly confidence?: number
  readonly approval_required?: boolean
  readonly approval_reason?: string
}

interface Execution {
  readonly name: string
  readonly workflow?: string
  readonly phase?: string
  readonly started_at?: string
  readonly completed_at?: string
  readonly duration?: string
  readonly result?: string
  readonly result_reason?: string
  readonly failure_reason?: string
}

interface Component {
  readonly assessed: boolean
  readonly score?: number
}

interface Effectiveness {
  readonly phase?: string
  readonly reason?: string
  readonly message?: string
  readonly components: {
    readonly health: Component
    readonly alert: Component
    readonly metrics: Component
    readonly spec_hash: { readonly assessed: boolean; readonly changed_since?: boolean }
  }
}

export interface Story {
  readonly root_cause?: RootCause
  readonly selected_workflow?: SelectedWorkflow
  readonly execution?: Execution
  readonly effectiveness?: Effectiveness
}

/** A titled list of the defined fields, or `empty` when there is nothing to show. */
const Facts = ({ title, rows, empty }: { title: string; rows: ReadonlyArray<readonly [string, ReactNode]> | undefined; empty: string }) => {
  const shown = (rows ?? []).filter(([, v]) => v !== undefined && v !== "")
  return (
    <section className="km-facts" aria-label={title}>
      <Title headingLevel="h2" size="lg">{title}</Title>
      {shown.length === 0 ? <p>{empty}</p> : (
        <DescriptionList isHorizontal isCompact>
          {shown.map(([k, v]) => (
            <DescriptionListGroup key={k}>
              <DescriptionListTerm>{k}</DescriptionListTerm>
              <DescriptionListDescription>{v}</DescriptionListDescription>
            </DescriptionListGroup>
          ))}
        </DescriptionList>
      )}
    </section>
  )
}

const percent = (n: number | undefined) => (n === undefined ? undefined : `${Math.round(n * 100)}%`)

const score = (c: Component) => c.assessed ? (c.score === undefined ? "assessed" : percent(c.score)) : "not assessed"

export const StoryView = ({ story }: { story: Story }) => {
  const { root_cause: rc, selected_workflow: wf, execution: ex, effectiveness: ea } = story
  return (
    <>
      <Facts
        title="Root cause"
        empty="The analysis has not reported a root cause yet."
        rows={rc && [
          ["Summary", rc.summary],
          ["Severity", rc.severity],
          ["Contributing factors", rc.contributing_factors && rc.contributing_factors.length > 0 ?
            <ul>{rc.contributing_factors.map((f) => <li key={f}>{f}</li>)}</ul> :
            undefined]
        ]}
      />
      <Facts
        title="Selected workflow"
        empty="No workflow has been selected yet."
        rows={wf && [
          ["Workflow", `${wf.name ?? wf.workflow_id}${wf.version === undefined ? "" : ` ${wf.version}`}`],
          ["Action", wf.action_type],
          ["Confidence", percent(wf.confidence)],
          ["Approval", wf.approval_required === undefined ? undefined : wf.approval_required ? `required: ${wf.approval_reason ?? ""}` : "not required"]
        ]}
      />
      <Facts
        title="Execution"
        empty="The workflow has not run."
        rows={ex && [
          ["Phase", ex.phase === undefined ? undefined : <Label color={ex.phase === "Failed" ? "red" : ex.phase === "Completed" ? "green" : "blue"}>{ex.phase}</Label>],
          ["Workflow", ex.workflow],
          ["Run", ex.name],
          ["Started", ex.started_at],
          ["Finished", ex.completed_at],
          ["Duration", ex.duration],
          ["Result", ex.result === undefined ? undefined : `${ex.result}${ex.result_reason === undefined ? "" : ` (${ex.result_reason})`}`],
          ["Failure", ex.failure_reason]
        ]}
      />
      <Facts
        title="Effectiveness"
        empty="No effectiveness assessment yet."
        rows={ea && [
          ["Assessment", `${ea.phase ?? "Pending"}${ea.reason === undefined ? "" : ` (${ea.reason})`}`],
          ["Health score", score(ea.components.health)],
          ["Alert score", score(ea.components.alert)],
          ["Metrics score", score(ea.components.metrics)],
          ["Spec hash", ea.components.spec_hash.assessed ?
            ea.components.spec_hash.changed_since === true ? "changed since the remediation" : "computed" :
            "not computed"],
          ["Message", ea.message]
        ]}
      />
    </>
  )
}

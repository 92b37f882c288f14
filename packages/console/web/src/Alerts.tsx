/** Firing and pending alerts as the gateway's severity triage sees them (`svc_list_alerts`). */
import { Label, PageSection, Title } from "@patternfly/react-core"
import { callTool } from "./api.ts"
import { age, Show, useLoad } from "./load.tsx"

interface AlertView {
  readonly labels: Record<string, string>
  readonly state: string
  readonly active_at: string
  readonly severity?: string
}

export const Alerts = () => {
  const loaded = useLoad(() => callTool<{ alerts: ReadonlyArray<AlertView> }>("svc_list_alerts"), [], 30_000)
  return (
    <PageSection>
      <Title headingLevel="h1">Alerts</Title>
      <Show loaded={loaded} what="alerts">
        {({ alerts }) =>
          alerts.length === 0 ? <p>No alerts are firing.</p> : (
            <ul aria-label="Alerts">
              {alerts.map((a, i) => (
                <li key={i}>
                  <Label color={a.state === "firing" ? "red" : "orange"}>{a.state}</Label> <strong>{a.labels.alertname ?? "alert"}</strong>{" "}
                  {a.severity ?? a.labels.severity ?? ""} in {a.labels.namespace ?? "cluster"} ({a.labels.job ?? a.labels.source ?? "metrics backend"},{" "}
                  {age(a.active_at)})
                </li>
              ))}
            </ul>
          )}
      </Show>
    </PageSection>
  )
}

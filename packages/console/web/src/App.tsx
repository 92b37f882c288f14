/**
 * The shell: the access gate first (one `GET /a2a/access`; nothing else is shown until it says allowed), then the
 * masthead with the signed-in user and the views: remediations, approvals, investigation, audit trail, alerts.
 */
import {
  Alert,
  Button,
  EmptyState,
  EmptyStateBody,
  Masthead,
  MastheadBrand,
  MastheadContent,
  MastheadMain,
  MastheadToggle,
  Nav,
  NavItem,
  NavList,
  Page,
  PageSection,
  PageSidebar,
  PageSidebarBody,
  PageContext,
  PageToggleButton,
  SkipToContent,
  Spinner,
  Toolbar,
  ToolbarContent,
  ToolbarItem
} from "@patternfly/react-core"
import { useContext, useEffect, useState } from "react"
import { type Access, checkAccess, me, type Me, signOut } from "./api.ts"
import { Alerts } from "./Alerts.tsx"
import { Approvals } from "./Approvals.tsx"
import { AuditTrail } from "./AuditTrail.tsx"
import { Investigation } from "./Investigation.tsx"
import { RemediationDetail } from "./RemediationDetail.tsx"
import { Remediations } from "./Remediations.tsx"
import { navigate, usePath } from "./router.ts"

const views = [
  { path: "/remediations", label: "Remediations" },
  { path: "/approvals", label: "Approvals" },
  { path: "/investigate", label: "Investigation" },
  { path: "/audit", label: "Audit trail" },
  { path: "/alerts", label: "Alerts" }
] as const

const Gate = ({ access }: { access: Access | "checking" }) => (
  <PageSection>
    {access === "checking" ?
      <Spinner aria-label="Checking console access" /> :
      (
        <EmptyState titleText={access === "denied" ? "Access denied" : "Unable to verify access"} headingLevel="h1" status="danger">
          <EmptyStateBody>
            {access === "denied"
              ? "Your account is signed in but none of its groups may use the Kubemend console. Ask a platform administrator for console access."
              : "The console could not confirm that you may use it, so it shows nothing. Reload the page to try again."}
          </EmptyStateBody>
        </EmptyState>
      )}
  </PageSection>
)

const View = ({ path }: { path: string }) => {
  const detail = /^\/remediations\/([^/]+)$/.exec(path)
  if (detail !== null) return <RemediationDetail id={decodeURIComponent(detail[1]!)} />
  if (path.startsWith("/approvals")) return <Approvals />
  if (path.startsWith("/investigate")) return <Investigation />
  if (path.startsWith("/audit")) return <AuditTrail />
  if (path.startsWith("/alerts")) return <Alerts />
  return <Remediations />
}

/**
 * The views menu. Rendered inside the Page, so it reads the Page's own sidebar state (a `useContext` in `App`, which
 * renders the Page, gets PatternFly's defaults: never mobile, a toggle that does nothing). On a phone the open menu
 * lies over the page, so picking a view closes it; on a desktop it stays beside the view.
 */
const ViewsNav = ({ path }: { path: string }) => {
  const { isMobile, isSidebarOpen, onSidebarToggle } = useContext(PageContext)
  return (
    <Nav aria-label="Console views">
      <NavList>
        {views.map((v) => (
          <NavItem
            key={v.path}
            isActive={path.startsWith(v.path) || (path === "/" && v.path === "/remediations")}
            to={v.path}
            onClick={(e) => {
              e.preventDefault()
              navigate(v.path)
              if (isMobile && isSidebarOpen) {
                onSidebarToggle()
                // Focus would stay on a link of the now hidden menu.
                document.getElementById("main")?.focus()
              }
            }}
          >
            {v.label}
          </NavItem>
        ))}
      </NavList>
    </Nav>
  )
}

export const App = () => {
  const path = usePath()
  const [access, setAccess] = useState<Access | "checking">("checking")
  const [user, setUser] = useState<Me | undefined>()
  const [error, setError] = useState<string | undefined>()
  useEffect(() => {
    void checkAccess().then(setAccess)
    me().then(setUser, (e: unknown) => setError(e instanceof Error ? e.message : String(e)))
  }, [])

  const masthead = (
    <Masthead>
      <MastheadMain>
        {access === "allowed" && (
          <MastheadToggle>
            <PageToggleButton isHamburgerButton aria-label="Show or hide the console views" />
          </MastheadToggle>
        )}
        <MastheadBrand>
          <strong>Kubemend</strong>
        </MastheadBrand>
      </MastheadMain>
      <MastheadContent>
        <Toolbar isFullHeight>
          <ToolbarContent>
            <ToolbarItem align={{ default: "alignEnd" }}>{user?.user ?? ""}</ToolbarItem>
            <ToolbarItem>
              <Button variant="secondary" onClick={() => void signOut()}>Sign out</Button>
            </ToolbarItem>
          </ToolbarContent>
        </Toolbar>
      </MastheadContent>
    </Masthead>
  )
  const sidebar = access !== "allowed" ? undefined : (
    <PageSidebar>
      <PageSidebarBody>
        <ViewsNav path={path} />
      </PageSidebarBody>
    </PageSidebar>
  )
  return (
    <Page
      masthead={masthead}
      sidebar={sidebar}
      isManagedSidebar
      mainContainerId="main"
      skipToContent={<SkipToContent href="#main">Skip to content</SkipToContent>}
    >
      {error !== undefined && (
        <PageSection>
          <Alert variant="danger" isInline title="Could not read who is signed in">{error}</Alert>
        </PageSection>
      )}
      {access === "allowed" ? <View path={path} /> : <Gate access={access} />}
    </Page>
  )
}

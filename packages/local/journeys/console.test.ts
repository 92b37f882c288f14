/**
 * The web console in a real headless Chromium (Debian's `chromium`, driven by playwright-core; its own browser
 * download cannot work here) against the local platform: sign in through the dev issuer's persona page, see the
 * seeded remediations and one's timeline; approve the pending request as the approver and watch its phase move;
 * a user without console access sees "Access denied"; on a phone, picking a view closes the menu. Every view and the
 * persona page pass an axe-core WCAG 2.1 A/AA scan. Without Chromium this file says so and skips; with `CI`
 * set it fails instead (`.ci/run` installs Chromium).
 */
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { horizontalOverflow, seriousViolations } from "../../console/scripts/axe.ts"
import { chromiumPresent, executablePath, launch, signIn as signInAt } from "../../console/scripts/chromium.ts"
import { a2aInvestigationAsk } from "../src/Investigations.ts"
import { demoNamespace } from "../src/Demo.ts"
import { call, type LocalPlatform, startPlatform } from "./platform.ts"

const present = chromiumPresent()
if (!present && process.env["CI"] !== undefined) throw new Error(`${executablePath} is missing: install Debian's chromium package (.ci/run does)`)
if (!present) console.warn(`console.test.ts skipped: ${executablePath} is missing (apt-get install chromium)`)

let platform: LocalPlatform
let browser: BrowserContext

beforeAll(async () => {
  if (!present) return
  platform = await startPlatform()
  browser = await launch()
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await platform?.stop()
}, 60_000)

const signIn = (persona: string, path: string): Promise<Page> => signInAt(browser, platform.stack.console.url, persona, path)

/**
 * The view at `path` once loaded (its h1 is there and no spinner is left), reached as the app's own links do: a new
 * page load per view would open an MCP session each time and spend the user's 60 tool calls a minute.
 */
const open = async (page: Page, path: string, heading: string) => {
  await page.evaluate((p) => {
    window.history.pushState(null, "", p)
    window.dispatchEvent(new PopStateEvent("popstate"))
  }, path)
  await page.getByRole("heading", { level: 1, name: heading }).waitFor({ timeout: 30_000 })
  await expect.poll(() => page.locator(".pf-v6-c-spinner").count(), { timeout: 30_000 }).toBe(0)
}

describe.skipIf(!present)("the web console in Chromium", () => {
  it("as sre: signs in through the persona page, lists the seeded remediations and opens one's timeline", async () => {
    const page = await signIn("sre", "/remediations")
    const list = page.getByRole("table", { name: "Remediations" })
    await expect.poll(() => list.getByRole("link", { name: "rr-checkout-oom" }).count(), { timeout: 30_000 }).toBe(1)
    await list.getByRole("link", { name: "rr-checkout-oom" }).click()
    await page.getByRole("heading", { name: "Remediation rr-checkout-oom" }).waitFor()
    await page.getByRole("heading", { name: "Timeline" }).waitFor({ timeout: 30_000 })
    expect(await page.getByText("AwaitingApproval").count()).toBeGreaterThan(0)
    // The story so far: the analysis's root cause and selected workflow, storage's verdict on the audit chain.
    await page.getByRole("region", { name: "Root cause" }).getByText("checkout is OOMKilled", { exact: false }).waitFor()
    await page.getByRole("region", { name: "Selected workflow" }).getByText("rollback-deployment", { exact: false }).waitFor()
    await page.getByRole("region", { name: "Execution" }).getByText("The workflow has not run.").waitFor()
    await page.getByText("Audit chain intact").waitFor({ timeout: 30_000 })
  })

  it("as remediation-approver: approves the pending request and sees its phase move", async () => {
    const page = await signIn("remediation-approver", "/approvals")
    const card = page.locator(".pf-v6-c-card", { hasText: "rar-rr-checkout-oom" })
    await card.getByRole("button", { name: "Approve" }).click({ timeout: 30_000 })
    const dialog = page.getByRole("dialog")
    await dialog.getByLabel("Reason").fill("the limit is the problem, not the release")
    // The override is picked by RemediationWorkflow name from the catalog the request carries, the recommendation first.
    const picker = dialog.getByLabel("Workflow to run")
    expect(await picker.inputValue()).toBe("rollback-deployment")
    await picker.selectOption({ label: "increase-memory-limit: Raise a container's memory limit" })
    await dialog.getByRole("button", { name: "Approve" }).click()
    await page.getByText("rar-rr-checkout-oom approved with workflow increase-memory-limit").waitFor({ timeout: 30_000 })
    await page.goto(`${platform.stack.console.url}/remediations/rr-checkout-oom`)
    // The status stream moves the detail on: the approved request leaves AwaitingApproval.
    await expect.poll(async () => page.locator("dd .pf-v6-c-label").first().textContent(), { timeout: 60_000, interval: 500 })
      .not.toBe("AwaitingApproval")
    // The run and its assessment appear as they happen; the approver may not read the audit trail and is told so.
    const execution = page.getByRole("region", { name: "Execution" })
    await execution.getByText("Completed", { exact: true }).waitFor({ timeout: 90_000 })
    // The orchestrator resolved the override's name to the catalog entry it ran, shown by its name.
    await execution.getByText("increase-memory-limit", { exact: true }).waitFor()
    await page.getByRole("region", { name: "Effectiveness" }).getByText("Health score").waitFor({ timeout: 90_000 })
    await page.getByText("No permission to see the audit trail").waitFor()
  })

  it("as sre: the approvals inbox says there is no permission to review", async () => {
    const page = await signIn("sre", "/approvals")
    await page.getByRole("heading", { name: "No permission to review approvals" }).waitFor({ timeout: 30_000 })
    expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(0)
  })

  it("as sre: a chat investigation reaches a root cause, keeps its conversation across a reload, and a workflow is selected", async () => {
    const page = await signIn("sre", "/investigate")
    await page.getByLabel("Message to the investigation agent")
      .fill(`${a2aInvestigationAsk}: api_version: apps/v1, namespace: ${demoNamespace}, kind: StatefulSet, name: payments-db`)
    await page.getByRole("button", { name: "Send" }).click()
    const log = page.getByRole("log", { name: "Conversation" })
    await log.getByText("has finished").waitFor({ timeout: 120_000 })
    // The session's live events arrived while the agent waited; its reasoning is there, collapsed.
    expect(await log.getByRole("region", { name: "Live investigation events" }).textContent()).toContain("OOMKilled")
    const reasoning = log.getByRole("button", { name: /Reasoning \(\d+ steps?\)/ })
    const step = log.getByText("Starting an investigation of the workload.")
    expect(await step.isVisible()).toBe(false)
    await reasoning.click()
    await step.waitFor()

    const session = page.getByRole("region", { name: /^Investigation of / })
    await session.getByRole("heading", { name: "Root cause" }).waitFor({ timeout: 30_000 })
    await session.getByText("OOMKilled", { exact: false }).first().waitFor()
    const contextId = await page.evaluate(() => localStorage.getItem("kubemend.console.contextId"))
    expect(contextId).toBeTruthy()

    const mcpSession = await page.evaluate(() => sessionStorage.getItem("kubemend.console.mcpSession"))
    expect(mcpSession).toBeTruthy()
    await page.reload()
    await log.getByText("has finished").waitFor({ timeout: 30_000 })
    expect(await page.evaluate(() => localStorage.getItem("kubemend.console.contextId"))).toBe(contextId)
    await session.getByRole("button", { name: "Select increase-memory-limit" }).click({ timeout: 30_000 })
    await session.getByText("Selected increase-memory-limit; the remediation starts.").waitFor({ timeout: 60_000 })
    // The reload went on with the tab's MCP session rather than opening another (ten per user at most).
    expect(await page.evaluate(() => sessionStorage.getItem("kubemend.console.mcpSession"))).toBe(mcpSession)

    await page.getByRole("button", { name: "New conversation" }).click()
    await page.getByText("No conversation yet.").waitFor()
    expect(await page.evaluate(() => localStorage.getItem("kubemend.console.contextId"))).toBeNull()
  })

  it("as sre: takes over another user's session after confirming, then escalates it", async () => {
    const aio = await platform.connect("ai-orchestrator")
    const started = await call(aio, "svc_investigate", { api_version: "apps/v1", namespace: demoNamespace, kind: "Deployment", name: "shipping" })
    const rr = started.rr_id as string
    const page = await signIn("sre", `/investigate?rr=${rr}`)
    const session = page.getByRole("region", { name: `Investigation of ${rr}` })
    await session.getByText("ai-orchestrator-user is driving this investigation").waitFor({ timeout: 30_000 })
    await session.getByRole("button", { name: "Take over" }).click()
    const dialog = page.getByRole("dialog")
    await dialog.getByText(`Take over the investigation of ${rr}?`).waitFor()
    await dialog.getByRole("button", { name: "Take over" }).click()
    await session.getByText("You hold the investigation now.").waitFor({ timeout: 30_000 })
    await session.getByText("held by sre-user").waitFor({ timeout: 30_000 })
    await session.getByLabel("Escalation reason").fill("needs the payments team")
    await session.getByRole("button", { name: "Escalate" }).click()
    await session.getByText("Escalated to a human team.").waitFor({ timeout: 30_000 })
  })

  it("every view and the dev issuer's persona page: no serious or critical axe violations, nothing wider than 1280x800 or a 390x844 phone", async () => {
    const views: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
      ["sre", [
        ["/remediations", "Remediations"],
        ["/remediations/rr-checkout-oom", "Remediation rr-checkout-oom"],
        ["/investigate", "Investigation"],
        ["/audit?rr=rr-checkout-oom", "Audit trail"],
        ["/alerts", "Alerts"],
        ["/approvals", "Approvals"]
      ]],
      ["remediation-approver", [["/approvals", "Approvals"]]],
      ["no-console", [["/remediations", "Access denied"]]]
    ]
    const found: Array<string> = []
    const scan = async (page: Page, where: string) => {
      for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
        await page.setViewportSize(viewport)
        for (const v of await seriousViolations(page)) {
          found.push(`${where} ${viewport.width}px: ${v.id} (${v.impact}) ${v.help} at ${v.targets.join(", ")}`)
        }
        const over = await horizontalOverflow(page)
        if (over > 0) found.push(`${where} ${viewport.width}px: ${over}px wider than the viewport`)
      }
    }
    // The page a signed-out user meets first, on the issuer's origin.
    const issuer = browser.pages()[0] ?? await browser.newPage()
    await issuer.goto("about:blank")
    await browser.clearCookies()
    await issuer.goto(`${platform.stack.console.url}/remediations`)
    await issuer.getByRole("heading", { level: 1, name: "Kubemend dev issuer" }).waitFor({ timeout: 30_000 })
    await scan(issuer, "persona page")
    await issuer.setViewportSize({ width: 1280, height: 800 })
    for (const [persona, paths] of views) {
      const page = await signIn(persona, paths[0]![0])
      for (const [path, heading] of paths) {
        await open(page, path, heading)
        await scan(page, `${persona} ${path}`)
      }
      await page.setViewportSize({ width: 1280, height: 800 })
    }
    expect(found).toEqual([])
  })

  it("keyboard only: skip to the content, move between views and open a remediation", async () => {
    const page = await signIn("sre", "/remediations")
    await page.getByRole("table", { name: "Remediations" }).waitFor({ timeout: 30_000 })
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content")
    const focusOn = async (name: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press("Tab")
        if ((await page.evaluate(() => document.activeElement?.textContent?.trim())) === name) return
      }
      throw new Error(`Tab never reached ${name}`)
    }
    await focusOn("Alerts")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Alerts" }).waitFor()
    await focusOn("Remediations")
    await page.keyboard.press("Enter")
    await page.getByRole("table", { name: "Remediations" }).waitFor({ timeout: 30_000 })
    await focusOn("rr-payments-disk")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { level: 1, name: "Remediation rr-payments-disk" }).waitFor()
  })

  it("on a 390x844 phone: picking a view in the menu closes the menu and shows the view; on a desktop the menu stays", async () => {
    const page = await signIn("sre", "/remediations")
    const toggle = page.getByRole("button", { name: "Show or hide the console views" })
    const nav = page.getByRole("navigation", { name: "Console views" })
    await nav.getByRole("link", { name: "Approvals" }).click()
    await page.getByRole("heading", { level: 1, name: "Approvals" }).waitFor({ timeout: 30_000 })
    expect(await toggle.getAttribute("aria-expanded")).toBe("true")

    await page.setViewportSize({ width: 390, height: 844 })
    try {
      // The phone layout starts closed. A closed sidebar is aria-hidden but stays laid out (clipped or moved off the
      // screen), so Playwright would call its links visible: closed is read from the toggle and the accessibility tree.
      await expect.poll(() => toggle.getAttribute("aria-expanded")).toBe("false")
      expect(await nav.count()).toBe(0)
      // Nor does Tab reach its links: none of the next stops from the menu toggle is in the menu.
      await toggle.focus()
      const stops: Array<string> = []
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press("Tab")
        stops.push(await page.evaluate(() => document.activeElement?.closest("nav")?.getAttribute("aria-label") ?? ""))
      }
      expect(stops).not.toContain("Console views")
      await toggle.click()
      await nav.getByRole("link", { name: "Alerts" }).click()
      const heading = page.getByRole("heading", { level: 1, name: "Alerts" })
      await heading.waitFor()
      await expect.poll(() => toggle.getAttribute("aria-expanded"), { timeout: 5_000 }).toBe("false")
      expect(await nav.count()).toBe(0)
      // Focus left the hidden menu for the view.
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("main")
      // Nothing covers the view any more: a tap on its heading would reach the heading.
      await heading.click({ trial: true, timeout: 5_000 })
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 })
    }
  })

  it("as no-console: the access gate says Access denied and shows nothing else", async () => {
    const page = await signIn("no-console", "/remediations")
    await page.getByRole("heading", { name: "Access denied" }).waitFor({ timeout: 30_000 })
    expect(await page.getByRole("table").count()).toBe(0)
  })
})

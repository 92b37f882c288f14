/**
 * The web console in a real headless Chromium (Debian's `chromium`, driven by playwright-core; its own browser
 * download cannot work here) against the local platform: sign in through the dev issuer's persona page, see the
 * seeded remediations and one's timeline; approve the pending request as the approver and watch its phase move;
 * a user without console access sees "Access denied". Without Chromium this file says so and skips; with `CI`
 * set it fails instead (`.ci/run` installs Chromium).
 */
import { chromium, type BrowserContext, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { type LocalPlatform, startPlatform } from "./platform.ts"

const executablePath = "/usr/bin/chromium"
const present = Fs.existsSync(executablePath)
if (!present && process.env["CI"] !== undefined) throw new Error(`${executablePath} is missing: install Debian's chromium package (.ci/run does)`)
if (!present) console.warn(`console.test.ts skipped: ${executablePath} is missing (apt-get install chromium)`)

let platform: LocalPlatform
let browser: BrowserContext

beforeAll(async () => {
  if (!present) return
  platform = await startPlatform()
  browser = await chromium.launchPersistentContext(Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-chromium-")), {
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ],
    viewport: { width: 1280, height: 800 }
  })
}, 240_000)

afterAll(async () => {
  await browser?.close()
  await platform?.stop()
}, 60_000)

/** Opens `path` signed out, picks `persona` on the dev issuer's page, and answers the console page. */
const signIn = async (persona: string, path: string): Promise<Page> => {
  await browser.clearCookies()
  const page = browser.pages()[0] ?? await browser.newPage()
  await page.goto(`${platform.stack.console.url}${path}`)
  await page.getByRole("button", { name: persona, exact: true }).click()
  await page.waitForURL(`${platform.stack.console.url}${path}`)
  return page
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
  })

  it("as remediation-approver: approves the pending request and sees its phase move", async () => {
    const page = await signIn("remediation-approver", "/approvals")
    const card = page.locator(".pf-v6-c-card", { hasText: "rar-rr-checkout-oom" })
    await card.getByRole("button", { name: "Approve" }).click({ timeout: 30_000 })
    const dialog = page.getByRole("dialog")
    await dialog.getByLabel("Reason").fill("rollback is safe")
    await dialog.getByRole("button", { name: "Approve" }).click()
    await page.getByText("rar-rr-checkout-oom approved").waitFor({ timeout: 30_000 })
    await page.goto(`${platform.stack.console.url}/remediations/rr-checkout-oom`)
    // The status stream moves the detail on: the approved request leaves AwaitingApproval.
    await expect.poll(async () => page.locator("dd .pf-v6-c-label").first().textContent(), { timeout: 60_000, interval: 500 })
      .not.toBe("AwaitingApproval")
  })

  it("as no-console: the access gate says Access denied and shows nothing else", async () => {
    const page = await signIn("no-console", "/remediations")
    await page.getByRole("heading", { name: "Access denied" }).waitFor({ timeout: 30_000 })
    expect(await page.getByRole("table").count()).toBe(0)
  })
})

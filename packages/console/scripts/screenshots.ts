/**
 * Screenshots of the console's main views for the README, taken in Debian's Chromium against a running `npm start`
 * (its `.local/stack.json`, or the file given as the first argument): the remediations list, a remediation's page,
 * the approvals inbox with the decision dialog, an investigation that reached a root cause, and the list on a phone.
 * Writes docs/console-*.png. Run: `node --import tsx packages/console/scripts/screenshots.ts`.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { launch, signIn } from "./chromium.ts"

const root = Path.resolve(import.meta.dirname, "..", "..", "..")
const stack = JSON.parse(Fs.readFileSync(process.argv[2] ?? Path.join(root, ".local", "stack.json"), "utf8")) as {
  console: { url: string }
}
const out = (name: string) => Path.join(root, "docs", `console-${name}.png`)
Fs.mkdirSync(Path.join(root, "docs"), { recursive: true })

const browser = await launch({ width: 1280, height: 800 })
try {
  const page = await signIn(browser, stack.console.url, "sre", "/remediations")
  const settled = async () => {
    await page.waitForFunction(() => document.querySelectorAll(".pf-v6-c-spinner").length === 0, undefined, { timeout: 30_000 })
  }
  await page.getByRole("table", { name: "Remediations" }).waitFor({ timeout: 30_000 })
  await settled()
  await page.screenshot({ path: out("remediations") })

  // The app scrolls inside its main area, so the long views get a taller window rather than a full-page shot.
  await page.setViewportSize({ width: 1280, height: 1500 })
  await page.goto(`${stack.console.url}/remediations/rr-checkout-oom`)
  await page.getByText("Audit chain intact").waitFor({ timeout: 30_000 })
  await settled()
  await page.screenshot({ path: out("remediation") })

  await page.goto(`${stack.console.url}/investigate`)
  await page.getByRole("button", { name: "New conversation" }).click()
  await page.getByLabel("Message to the investigation agent")
    .fill("Investigate this workload and tell me its root cause: api_version: apps/v1, namespace: demo-shop, kind: StatefulSet, name: payments-db")
  await page.getByRole("button", { name: "Send" }).click()
  await page.getByRole("heading", { name: "Workflow decision" }).waitFor({ timeout: 120_000 })
  await settled()
  await page.screenshot({ path: out("investigation") })

  await page.setViewportSize({ width: 390, height: 844 })
  await page.goto(`${stack.console.url}/remediations`)
  await page.getByRole("table", { name: "Remediations" }).waitFor({ timeout: 30_000 })
  await settled()
  await page.screenshot({ path: out("phone") })
  await page.setViewportSize({ width: 1280, height: 800 })

  const approver = await signIn(browser, stack.console.url, "remediation-approver", "/approvals")
  await approver.getByRole("button", { name: "Approve" }).first().click({ timeout: 30_000 })
  await approver.getByLabel("Workflow to run").waitFor()
  await approver.screenshot({ path: out("approvals") })
} finally {
  await browser.close()
}
console.log("wrote docs/console-{remediations,remediation,investigation,phone,approvals}.png")

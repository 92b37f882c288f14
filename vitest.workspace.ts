import { defineWorkspace } from "vitest/config"

// One project per package so `vitest run --project storage` narrows a run.
export default defineWorkspace(
  ["core", "storage", "agent", "gateway", "operator", "signals", "console"].map((name) => ({
    test: {
      name,
      root: `packages/${name}`,
      include: ["test/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000
    }
  })).concat([{
    // Scripted investigations of whole incidents against the real agent (packages/agent/scenarios).
    test: {
      name: "scenarios",
      root: "packages/agent",
      include: ["scenarios/**/*.test.ts"],
      testTimeout: 60_000,
      hookTimeout: 60_000
    }
  }, {
    // Journeys across the real services on the local platform (started once per file), with the official MCP and
    // A2A SDK clients (packages/operator/journeys).
    test: {
      name: "journeys",
      root: "packages/operator",
      include: ["journeys/**/*.test.ts"],
      testTimeout: 150_000,
      hookTimeout: 240_000
    }
  }])
)

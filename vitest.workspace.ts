import { defineWorkspace } from "vitest/config"

// One project per package so `vitest run --project storage` narrows a run.
export default defineWorkspace(
  ["core", "storage", "agent", "gateway", "operator", "signals"].map((name) => ({
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
  }])
)

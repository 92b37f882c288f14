/**
 * `npm start`: the whole platform on this machine. The devkit (dev Kubernetes API server, OIDC issuer, scripted
 * LLM, alerts backend) runs in this process; storage (embedded PostgreSQL), agent and gateway run as child
 * processes with the config files the operator renders from the platform CR. Ctrl-C drains and stops everything.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Logger } from "effect"
import { jsonLogger } from "@kubemend/core/Logger"
import { localPlatform } from "./Run.ts"

// A closed terminal stops the platform as Ctrl-C does (its services have process groups of their own).
process.once("SIGHUP", () => process.kill(process.pid, "SIGTERM"))

NodeRuntime.runMain(
  localPlatform.pipe(
    Effect.provide(Layer.merge(NodeContext.layer, Logger.replace(Logger.defaultLogger, jsonLogger()))),
    Effect.scoped
  ),
  { disableErrorReporting: true, disablePrettyLogger: true }
)

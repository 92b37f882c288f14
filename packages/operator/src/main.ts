/** The operator: reconciles platform CRs and drives the remediation lifecycle; health 8081, metrics 9090, JSON logs. */
import { runService } from "@kubemend/core/Main"
import { Layer } from "effect"
import { LeadershipLive } from "./runtime/Leadership.ts"
import { OperatorLive } from "./Service.ts"

// The manager runs every controller only while the process holds the operator's lease.
runService("operator", OperatorLive.pipe(Layer.provide(LeadershipLive)))

/** The operator: reconciles platform CRs and drives the remediation lifecycle; health 8081, metrics 9090, JSON logs. */
import { runService } from "@kubemend/core/Main"
import { Layer } from "effect"
import { LeadershipLive } from "./runtime/Leadership.ts"
import { LifecycleOperatorLive } from "./Controllers.ts"
import { OperatorLive } from "./Service.ts"

// Every controller in the process runs only while it holds the operator's lease.
runService("operator", Layer.mergeAll(OperatorLive, LifecycleOperatorLive).pipe(Layer.provide(LeadershipLive)))

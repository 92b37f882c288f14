/** The operator: reconciles platform CRs and drives the remediation lifecycle; health 8081, metrics 9090, JSON logs. */
import { runService } from "@kubemend/core/Main"
import { Layer } from "effect"
import { LifecycleOperatorLive } from "./Lifecycle/index.ts"
import { OperatorLive } from "./Operator.ts"

runService("operator", Layer.mergeAll(OperatorLive, LifecycleOperatorLive))

/** The operator: reconciles platform CRs into running platforms; health on 8081, metrics on 9090, JSON logs. */
import { runService } from "@kubemend/core/Main"
import { OperatorLive } from "./Operator.ts"

runService("operator", OperatorLive)

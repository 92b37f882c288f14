import { k8sContract } from "./k8s/Contract.ts"
import { memoryLayer } from "./k8s/Harness.ts"

k8sContract("memory", memoryLayer)

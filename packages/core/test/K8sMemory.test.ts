import { k8sContract } from "./K8s/Contract.ts"
import { memoryLayer } from "./K8s/Harness.ts"

k8sContract("memory", memoryLayer)

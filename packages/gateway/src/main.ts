/** The gateway service: `node --import tsx packages/gateway/src/main.ts` (config: CONFIG_FILE + GATEWAY_* env). */
import { runService } from "@kubemend/core/Main"
import { gatewayLive } from "./Service.ts"

runService("gateway", gatewayLive)

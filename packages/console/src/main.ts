/** The web console: `node --import tsx packages/console/src/main.ts` (config: CONFIG_FILE + CONSOLE_* env). */
import { runService } from "@kubemend/core/Main"
import { consoleLive } from "./Service.ts"

runService("console", consoleLive)

/** The storage service: `node --import tsx packages/storage/src/main.ts [migrate]`. */
import { runService } from "@kubemend/core/Main"
import { runMigrateCommand, StorageMainLive } from "./Service.ts"

if (process.argv[2] === "migrate") runMigrateCommand()
else runService("storage", StorageMainLive)

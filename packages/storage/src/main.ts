/** The storage service: `node --import tsx packages/storage/src/main.ts [migrate | embedded-postgres]`. */
import { runService } from "@kubemend/core/Main"
import { EmbeddedDatabaseLive, runMigrateCommand, StorageMainLive } from "./Service.ts"

if (process.argv[2] === "migrate") runMigrateCommand()
else if (process.argv[2] === "embedded-postgres") runService("storage", EmbeddedDatabaseLive)
else runService("storage", StorageMainLive)

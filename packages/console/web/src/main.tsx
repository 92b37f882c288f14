import "@patternfly/react-core/dist/styles/base.css"
import "@patternfly/react-styles/css/components/Table/table.css"
import "./console.css"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>
)

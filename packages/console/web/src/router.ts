/** The app's routes are plain paths (the console server answers every one with the app); no router library needed. */
import { useEffect, useState } from "react"

export const navigate = (path: string) => {
  window.history.pushState(null, "", path)
  window.dispatchEvent(new PopStateEvent("popstate"))
}

export const usePath = () => {
  const [path, setPath] = useState(window.location.pathname)
  useEffect(() => {
    const update = () => setPath(window.location.pathname)
    window.addEventListener("popstate", update)
    return () => window.removeEventListener("popstate", update)
  }, [])
  return path
}

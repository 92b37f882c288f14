/**
 * What a browser does, by hand: a cookie jar (path-scoped, Max-Age=0 deletes), redirects followed one hop at a
 * time, and the issuer's login page submitted with one persona. Every answer is kept, so a test can check that
 * no token ever reached the browser.
 */
export interface Hop {
  readonly status: number
  readonly headers: Headers
  readonly body: string
  readonly url: string
}

export const makeBrowser = () => {
  const jar = new Map<string, { value: string; path: string }>()
  const seen: Array<Hop> = []
  const store = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";").map((s) => s.trim())
      const i = pair.indexOf("=")
      const name = pair.slice(0, i), value = pair.slice(i + 1)
      const path = attrs.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/"
      if (attrs.some((a) => a.toLowerCase() === "max-age=0")) jar.delete(name)
      else jar.set(name, { value, path })
    }
  }
  const cookieFor = (url: string) => {
    const path = new URL(url).pathname
    return [...jar.entries()].filter(([, c]) => path.startsWith(c.path)).map(([n, c]) => `${n}=${c.value}`).join("; ")
  }
  const request = async (url: string, init: RequestInit = {}): Promise<Hop> => {
    const headers = new Headers(init.headers)
    const cookie = cookieFor(url)
    if (cookie !== "") headers.set("cookie", cookie)
    const res = await fetch(url, { ...init, headers, redirect: "manual" })
    store(res)
    const hop = { status: res.status, headers: res.headers, body: await res.text(), url }
    seen.push(hop)
    return hop
  }
  /** Follows redirects from `url`; on the issuer's login page picks `persona`. Answers the last hop. */
  const navigate = async (url: string, persona?: string): Promise<Hop> => {
    let hop = await request(url)
    for (let i = 0; i < 10; i++) {
      if (hop.status >= 300 && hop.status < 400) {
        hop = await request(new URL(hop.headers.get("location")!, hop.url).toString())
        continue
      }
      if (persona !== undefined && hop.body.includes(`value="${persona}"`) && hop.url.includes("/authorize")) {
        const form = new URLSearchParams(new URL(hop.url).searchParams)
        form.set("persona", persona)
        hop = await request(new URL("/authorize", hop.url).toString(), {
          method: "POST",
          body: form.toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" }
        })
        continue
      }
      return hop
    }
    throw new Error("too many redirects")
  }
  return { request, navigate, jar, seen }
}

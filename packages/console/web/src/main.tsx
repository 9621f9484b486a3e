import { StrictMode, useEffect, useState } from "react"
import { createRoot } from "react-dom/client"
import { type Me, me, onSession, renew, type Session, signOut } from "./api.js"
import { AdminPage } from "./pages/Admin.js"
import { ChangesPage } from "./pages/Changes.js"
import { ChatPage } from "./pages/Chat.js"
import { ConnectorsPage } from "./pages/Connectors.js"
import { DashboardsPage } from "./pages/Dashboards.js"
import { KeysPage } from "./pages/Keys.js"
import { ConsentPage } from "./pages/OAuth.js"
import { PlaybooksPage } from "./pages/Playbooks.js"
import { QualityPage } from "./pages/Quality.js"
import { SandcastlesPage } from "./pages/Sandcastles.js"
import { SetPasswordPage, SignInPage } from "./pages/SignIn.js"
import "./styles.css"

const useHash = () => {
  const [hash, setHash] = useState(window.location.hash)
  useEffect(() => {
    const changed = () => setHash(window.location.hash)
    window.addEventListener("hashchange", changed)
    return () => window.removeEventListener("hashchange", changed)
  }, [])
  return hash
}

// The server's sign-in failure codes (`@sightline/http` `Oidc.Failure`), each with the one message
// shown for it: the page never shows text taken from its URL, which anyone can write into a link.
const signInFailures: Record<string, string> = {
  "provider-unreachable": "The identity provider cannot be reached. Try again later, or sign in with a password.",
  "expired": "The sign-in took too long or was started in another window. Try again.",
  "provider-refused": "The identity provider refused the sign-in. Try again.",
  "no-email": "The identity provider did not share your e-mail address.",
  "unverified-email": "The identity provider has not verified your e-mail address.",
  "no-member":
    "No single member of Sightline has your e-mail address: ask an administrator for an invite, or sign in with a password.",
  "unknown": "The sign-in failed. Try again."
}

const navigate = (hash: string) => {
  window.location.hash = hash
}

function App() {
  const hash = useHash()
  const [session, setSession] = useState<Session | undefined>()
  const [who, setWho] = useState<Me>()
  const [ready, setReady] = useState(false)
  const [menu, setMenu] = useState(false)

  useEffect(() => {
    const off = onSession(setSession)
    // A page load has no access token yet: the refresh cookie, if any, makes one.
    void renew().catch(() => undefined).finally(() => setReady(true))
    return () => {
      off()
    }
  }, [])
  useEffect(() => {
    if (session === undefined) return setWho(undefined)
    void me().then(setWho).catch(() => setWho(undefined))
  }, [session?.memberId])

  const setPasswordToken = /^#\/set-password\/([\w-]+)$/.exec(hash)?.[1]
  if (setPasswordToken !== undefined) {
    return (
      <SetPasswordPage
        token={setPasswordToken}
        done={() => navigate("#/chats")}
      />
    )
  }
  if (!ready) return <p className="muted loading">Loading…</p>
  const failure = /^#\/sign-in-failed\/(.*)$/.exec(hash)?.[1]
  if (session === undefined) {
    return (
      <SignInPage failure={failure === undefined ? undefined : signInFailures[failure] ?? signInFailures["unknown"]} />
    )
  }

  const can = (permission: string) => who?.permissions.includes(permission) ?? false
  const pages = [
    { hash: "#/chats", label: "Chat", show: true },
    { hash: "#/dashboards", label: "Dashboards", show: true },
    { hash: "#/playbooks", label: "Playbooks", show: can("playbook:read") },
    { hash: "#/connectors", label: "Connectors", show: can("connector:read") },
    { hash: "#/keys", label: "API keys", show: true },
    { hash: "#/sandcastles", label: "Sandcastles", show: can("sandbox:read") },
    { hash: "#/changes", label: "Changes", show: can("change:read") },
    { hash: "#/quality", label: "Quality", show: can("connector:write") || can("organization:read") },
    { hash: "#/admin", label: "Admin", show: can("organization:read") }
  ].filter((page) => page.show)
  const route = hash === "" || hash === "#/" ? "#/chats" : hash
  const chatId = /^#\/chats\/([\w-]+)$/.exec(route)?.[1]
  const dashboard = /^#\/dashboards\/([\w-]+)$/.exec(route)?.[1]
  // An agent's authorization request: its parameters follow the route, as `/oauth/authorize` got them.
  const consent = /^#\/oauth\/authorize\?(.*)$/.exec(route)?.[1]
  const page = consent !== undefined
    ? <ConsentPage query={consent} />
    : route.startsWith("#/chats")
    ? <ChatPage chatId={chatId} navigate={navigate} />
    : route === "#/dashboards" || dashboard !== undefined
    ? <DashboardsPage key={dashboard ?? ""} name={dashboard} navigate={navigate} />
    : route === "#/playbooks"
    ? <PlaybooksPage />
    : route === "#/connectors"
    ? <ConnectorsPage />
    : route === "#/keys"
    ? <KeysPage />
    : route === "#/sandcastles"
    ? <SandcastlesPage />
    : route === "#/changes"
    ? <ChangesPage />
    : route === "#/quality" && (can("connector:write") || can("organization:read"))
    ? <QualityPage can={can} />
    : route === "#/admin" && can("organization:read")
    ? <AdminPage />
    : (
      <main className="page">
        <h1>Not found</h1>
        <p>This page does not exist or is not yours to see.</p>
      </main>
    )

  return (
    <div className="shell">
      <a
        className="skip"
        href="#main-content"
        onClick={(e) => {
          e.preventDefault()
          document.getElementById("main-content")?.focus()
        }}
      >
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Sightline</span>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menu}
          aria-controls="nav"
          onClick={() => setMenu(!menu)}
        >
          Menu
        </button>
        <nav id="nav" aria-label="Main" className={menu ? "open" : ""}>
          {pages.map((p) => (
            <a
              key={p.hash}
              href={p.hash}
              aria-current={route.startsWith(p.hash) ? "page" : undefined}
              onClick={() => setMenu(false)}
            >
              {p.label}
            </a>
          ))}
        </nav>
        <span className="who">{who?.email}</span>
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <div id="main-content" tabIndex={-1}>{page}</div>
    </div>
  )
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>
)

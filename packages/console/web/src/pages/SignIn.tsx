import { type FormEvent, useEffect, useState } from "react"
import { setPassword, signIn } from "../api.js"

interface Methods {
  readonly password: boolean
  readonly oidc?: { readonly name: string; readonly start_url: string }
}

export function SignInPage({ failure }: { readonly failure?: string | undefined }) {
  const [email, setEmail] = useState("")
  const [password, setPasswordValue] = useState("")
  const [error, setError] = useState<string | undefined>(failure)
  const [busy, setBusy] = useState(false)
  const [methods, setMethods] = useState<Methods>({ password: true })
  useEffect(() => {
    void fetch("v2/auth/methods").then((r) => r.json()).then(setMethods, () => undefined)
  }, [])
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await signIn(email, password)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main className="auth-page">
      <form className="card auth" onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Sightline</h1>
        <label className="field">
          <span>E-mail address</span>
          <input
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Password</span>
          <input
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPasswordValue(e.target.value)}
          />
        </label>
        {error === undefined ? null : <p className="error" role="alert">{error}</p>}
        <button type="submit" className="primary" disabled={busy}>Sign in</button>
        {methods.oidc === undefined ? null : (
          // A full navigation: the provider's pages are not this app's.
          <a className="button-link" href={methods.oidc.start_url.replace(/^\//, "")}>
            Sign in with {methods.oidc.name}
          </a>
        )}
        <p className="muted">Forgot your password? Ask an administrator for a new sign-in link.</p>
      </form>
    </main>
  )
}

export function SetPasswordPage({ token, done }: { readonly token: string; readonly done: () => void }) {
  const [password, setPasswordValue] = useState("")
  const [confirm, setConfirm] = useState("")
  const [error, setError] = useState<string>()
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (password !== confirm) return setError("The two passwords differ.")
    setError(undefined)
    try {
      await setPassword(token, password)
      done()
    } catch (e) {
      setError((e as Error).message)
    }
  }
  return (
    <main className="auth-page">
      <form className="card auth" onSubmit={submit} aria-labelledby="set-password-title">
        <h1 id="set-password-title">Choose your password</h1>
        <p className="muted">At least 8 characters. This link works once.</p>
        <label className="field">
          <span>New password</span>
          <input
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={password}
            onChange={(e) => setPasswordValue(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Repeat the password</span>
          <input
            type="password"
            autoComplete="new-password"
            minLength={8}
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
          />
        </label>
        {error === undefined ? null : <p className="error" role="alert">{error}</p>}
        <button type="submit" className="primary">Set password and sign in</button>
      </form>
    </main>
  )
}

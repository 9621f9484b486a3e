/** Polls `read` every 100 ms until it returns a value, failing after `timeoutMs` with what it waited for. */
export const until = async <A>(what: string, read: () => Promise<A | undefined>, timeoutMs = 30_000): Promise<A> => {
  const started = Date.now()
  for (;;) {
    const value = await read()
    if (value !== undefined) return value
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * `@sightline/embed/react`: the elements as React components, for hosts that use React. Each renders
 * its element and hands it `getToken` (a property, which React 18 would not set on a custom element)
 * and its events as props.
 *
 * ```tsx
 * <SightlineChat server="https://sightline.example.com" getToken={mint} onAnswer={(e) => …} />
 * ```
 *
 * @since 0.1.0
 */
import { createElement, useEffect, useRef } from "react"
import "./index.js"
import type { GetToken } from "./internal/connection.js"

/** The props of both components. */
export interface Props {
  readonly server: string
  readonly getToken: GetToken
  readonly lang?: string | undefined
  readonly className?: string | undefined
  readonly onAnswer?: ((event: CustomEvent) => void) | undefined
  readonly onError?: ((event: CustomEvent) => void) | undefined
  readonly onTokenExpired?: ((event: CustomEvent) => void) | undefined
}

const useElement = (props: Props) => {
  const ref = useRef<HTMLElement & { getToken: GetToken | undefined }>(null)
  useEffect(() => {
    const element = ref.current
    if (element === null) return
    element.getToken = props.getToken
    const listeners = [
      ["answer", props.onAnswer],
      ["error", props.onError],
      ["token-expired", props.onTokenExpired]
    ] as const
    const attached = listeners.flatMap(([name, listener]) => {
      if (listener === undefined) return []
      const handler = (event: Event) => listener(event as CustomEvent)
      element.addEventListener(name, handler)
      return [() => element.removeEventListener(name, handler)]
    })
    return () => attached.forEach((detach) => detach())
  }, [props.getToken, props.onAnswer, props.onError, props.onTokenExpired])
  return ref
}

/** `<sightline-chat>` as a component. */
export const SightlineChat = (props: Props) =>
  createElement("sightline-chat", {
    ref: useElement(props),
    server: props.server,
    lang: props.lang,
    className: props.className
  })

/** `<sightline-dashboard>` as a component. */
export const SightlineDashboard = (props: Props & { readonly name: string }) =>
  createElement("sightline-dashboard", {
    ref: useElement(props),
    server: props.server,
    name: props.name,
    lang: props.lang,
    className: props.className
  })

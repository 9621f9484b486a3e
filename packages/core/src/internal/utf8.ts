/**
 * UTF-8 byte counting without `TextEncoder` (core has no DOM typings): execution previews are
 * bounded in UTF-8 bytes, and so are webhook payloads.
 *
 * @internal
 */

/**
 * The UTF-8 length of one code point. A lone surrogate counts 3 bytes, as the U+FFFD that UTF-8
 * encoders write in its place.
 */
export const codePointBytes = (codePoint: number): number =>
  codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4

/** The length of a string in UTF-8 bytes. */
export const byteLength = (text: string): number => {
  let bytes = 0
  for (const character of text) bytes += codePointBytes(character.codePointAt(0)!)
  return bytes
}

// Core compiles against ES2022 only (no DOM or Node typings), so the two WHATWG encoding classes
// every supported runtime has are declared here.
interface TextCodecs {
  readonly TextEncoder: new() => { encode(input: string): Uint8Array }
  readonly TextDecoder: new() => { decode(input: Uint8Array): string }
}
const codecs = globalThis as unknown as TextCodecs
const encoder = new codecs.TextEncoder()
const decoder = new codecs.TextDecoder()

/** UTF-8 bytes of a string. */
export const encodeText = (text: string): Uint8Array => encoder.encode(text)

/** A string from UTF-8 bytes (invalid sequences become U+FFFD). */
export const decodeText = (bytes: Uint8Array): string => decoder.decode(bytes)

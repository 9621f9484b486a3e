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

/**
 * Small text measurements shared by the send validation.
 *
 * Lengths in the spec ("at most 500 characters") are counted in Unicode code
 * points, not UTF-16 code units: an emoji counts as one character, as a caller
 * would expect, and the count does not depend on the transport's encoding.
 */

/**
 * True when `value` has more than `max` code points. Cheap for the common
 * case: a string never has more code points than UTF-16 code units, so only
 * strings whose `.length` is over the limit are counted (html may be 400k).
 */
export function exceedsCodePoints(value: string, max: number): boolean {
  if (value.length <= max) return false;
  let count = 0;
  for (const _ of value) {
    count++;
    if (count > max) return true;
  }
  return false;
}

/** Number of code points, for messages and tests. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * A value that ends up in a mail header must not carry CR or LF: a line break
 * would let the caller append headers of their own (header injection).
 */
export function hasLineBreak(value: string): boolean {
  return /[\r\n]/.test(value);
}

/**
 * Other C0 controls and DEL are never meaningful in a header line (a NUL
 * truncates it in some MTAs); horizontal tab is allowed as ordinary
 * whitespace.
 */
export function hasControlCharacter(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(value);
}

/**
 * PostgreSQL text cannot hold U+0000: a value with it would fail the
 * statement that stores it (a 500), so every stored text refuses it up front.
 */
export function hasNul(value: string): boolean {
  return value.includes("\0");
}

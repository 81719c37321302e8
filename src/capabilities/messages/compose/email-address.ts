import { domainToASCII, domainToUnicode } from "node:url";

/**
 * Email address check for recipients and reply-to addresses.
 *
 * No address-validation library is a dependency of this project (only
 * transitive ones such as ajv-formats' regex, which we must not rely on), so
 * this is a small, deliberately conservative check of the address forms a
 * transactional sender meets in practice. It accepts a subset of RFC 5321 /
 * RFC 5322 `addr-spec`:
 *
 * - exactly one `@`; quoted local parts (`"a b"@x`) and address literals
 *   (`a@[192.0.2.1]`) are refused: they are legal but rare, and often a sign
 *   of abuse;
 * - no spaces or control characters anywhere (also no surrounding space: the
 *   caller must send the bare address);
 * - local part: an RFC 5322 dot-atom (atext characters, dots only between
 *   them), ASCII only (SMTPUTF8 mailboxes are not supported downstream), at
 *   most 64 octets (RFC 5321 4.5.3.1.1);
 * - domain: at least two labels; each label 1..63 letters, digits or hyphens,
 *   not starting or ending with a hyphen (RFC 1035 / RFC 5890 LDH rule); the
 *   top-level label is not all-numeric (RFC 3696 2, which also rules out bare
 *   IPv4 addresses); at most 255 octets (RFC 5321 4.5.3.1.2);
 * - the whole address at most 254 octets (the 256-octet path limit of
 *   RFC 5321 4.5.3.1.3 minus the angle brackets).
 *
 * Internationalised domain names are accepted and converted to their ASCII
 * (A-label, "xn--") form, which is what the SMTP envelope needs and gives one
 * spelling per domain for comparisons. A domain that IDNA would silently
 * *change* (full-width letters, zero-width characters, ...) is refused rather
 * than mapped, so that the address we send to is the one the caller wrote.
 */

export const MAX_LOCAL_PART_OCTETS = 64;
export const MAX_DOMAIN_OCTETS = 255;
export const MAX_ADDRESS_OCTETS = 254;

export type EmailAddressCheck =
  | { readonly ok: true; readonly address: string }
  | { readonly ok: false; readonly problem: string };

// RFC 5322 atext, joined by single dots. The two character classes are
// separated by a literal dot, so the pattern cannot backtrack badly.
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ALL_DIGITS = /^[0-9]+$/;
// eslint-disable-next-line no-control-regex
const SPACE_OR_CONTROL = /[\x00-\x20\x7f\u0085\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]/;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;

const INVALID = "must be a valid email address";

/**
 * Checks an address; on success returns it normalised: the local part as
 * written (it is case-sensitive in principle, RFC 5321 2.4) and the domain in
 * lower-case ASCII form.
 */
export function checkEmailAddress(input: string): EmailAddressCheck {
  if (input.length === 0) return fail("must not be empty");
  if (SPACE_OR_CONTROL.test(input)) return fail(`${INVALID} (no spaces or control characters)`);

  const at = input.indexOf("@");
  if (at === -1) return fail(`${INVALID} (missing @)`);
  if (input.indexOf("@", at + 1) !== -1) return fail(`${INVALID} (more than one @)`);

  const local = input.slice(0, at);
  const domainAsWritten = input.slice(at + 1);

  if (local.length === 0) return fail(`${INVALID} (nothing before @)`);
  if (NON_ASCII.test(local)) return fail(`${INVALID} (only ASCII characters before @)`);
  if (local.length > MAX_LOCAL_PART_OCTETS) {
    return fail(`${INVALID} (more than ${MAX_LOCAL_PART_OCTETS} characters before @)`);
  }
  if (!DOT_ATOM.test(local)) return fail(`${INVALID} (invalid characters or dots before @)`);

  const domain = asciiDomain(domainAsWritten);
  if (domain === undefined) return fail(`${INVALID} (invalid domain)`);
  const domainProblem = ldhDomainProblem(domain);
  if (domainProblem) return fail(`${INVALID} (${domainProblem})`);

  const address = `${local}@${domain}`;
  if (address.length > MAX_ADDRESS_OCTETS) {
    return fail(`${INVALID} (longer than ${MAX_ADDRESS_OCTETS} characters)`);
  }
  return { ok: true, address };
}

/** True when `input` passes {@link checkEmailAddress}. */
export function isEmailAddress(input: string): boolean {
  return checkEmailAddress(input).ok;
}

function fail(problem: string): EmailAddressCheck {
  return { ok: false, problem };
}

/**
 * The domain in lower-case ASCII form, or undefined when an internationalised
 * name is not valid IDNA or would be altered by IDNA mapping.
 */
function asciiDomain(domain: string): string | undefined {
  if (!NON_ASCII.test(domain)) return domain.toLowerCase();
  const ascii = domainToASCII(domain);
  if (ascii === "") return undefined;
  // Round trip: refuse anything IDNA maps to something else (beyond case
  // folding and NFC), e.g. full-width dots or zero-width joiners.
  if (domainToUnicode(ascii) !== domain.normalize("NFC").toLowerCase()) return undefined;
  return ascii;
}

function ldhDomainProblem(domain: string): string | undefined {
  if (domain.length === 0) return "nothing after @";
  if (domain.length > MAX_DOMAIN_OCTETS) return `domain longer than ${MAX_DOMAIN_OCTETS} characters`;
  const labels = domain.split(".");
  if (labels.length < 2) return "domain needs at least one dot";
  for (const label of labels) {
    if (label.length === 0) return "empty domain label";
    if (label.length > 63) return "domain label longer than 63 characters";
    if (!LDH_LABEL.test(label)) return "domain labels use letters, digits and inner hyphens only";
  }
  const tld = labels[labels.length - 1] ?? "";
  if (ALL_DIGITS.test(tld)) return "top-level domain must not be numeric";
  return undefined;
}

import { checkEmailAddress } from "../messages/compose/email-address.ts";

/**
 * A contact's address, and the key it is matched by. The check is the send
 * path's (checkEmailAddress: one `@`, ASCII dot-atom local part, LDH domain,
 * internationalised domains converted to A-labels with node:url
 * domainToASCII), after trimming; the key is that address lower-cased as a
 * whole, the spelling the suppression list uses too, so `Bob@Bücher.example`
 * and `bob@xn--bcher-kva.example` are one contact and a bounce of either
 * finds it.
 */
export type ContactEmail =
  | { readonly ok: true; readonly email: string; readonly key: string }
  | { readonly ok: false; readonly problem: string };

export function contactEmail(input: string): ContactEmail {
  const check = checkEmailAddress(input.trim());
  if (!check.ok) return { ok: false, problem: check.problem };
  return { ok: true, email: check.address, key: check.address.toLowerCase() };
}

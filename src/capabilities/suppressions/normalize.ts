import { checkEmailAddress } from "../messages/compose/email-address.ts";

/**
 * The one spelling of an address in the suppression list: lower-cased as a
 * whole, internationalised domains in A-label form (what the send path's
 * checkEmailAddress gives recipients). Local parts are case-sensitive in
 * theory only; a bounce of `Bob@x` must also stop mail to `bob@x`.
 */
export function suppressionKey(email: string): string {
  const trimmed = email.trim();
  const check = checkEmailAddress(trimmed);
  return (check.ok ? check.address : trimmed).toLowerCase();
}

import { API_KEY_SCOPES } from "../accounts/scopes.ts";
import type { MemberRole } from "./types.ts";

/**
 * The one place a role becomes scopes. `member`: the read
 * scopes (Mail access: the message log, contacts). `admin` and `owner`:
 * every scope but `mail.transactional.send` (sends are attributed to API
 * keys; a person sends through a key they create), so including mail.admin.
 */
const READ_SCOPES: readonly string[] = ["mail.events.read", "mail.contacts.read"];
const ADMIN_SCOPES: readonly string[] = API_KEY_SCOPES.filter((scope) => scope !== "mail.transactional.send");

export function scopesOfRole(role: MemberRole): readonly string[] {
  return role === "member" ? READ_SCOPES : ADMIN_SCOPES;
}

/** Mail administration: owners and admins. */
export function administers(role: MemberRole): boolean {
  return role === "owner" || role === "admin";
}

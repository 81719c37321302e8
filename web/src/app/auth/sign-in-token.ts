/**
 * The one-time sign-in token arrives in the URL fragment
 * (`/admin/sign-in#token=...`, so it never reaches a server log or a
 * Referer). It is read once, before the first render, and removed from the
 * address bar and the current history entry with `history.replaceState`;
 * afterwards only this module holds it, until the exchange consumes it.
 */
let pending: string | undefined;

export function takeSignInToken(): void {
  const hash = window.location.hash;
  if (!hash.includes("token=")) return;
  const token = new URLSearchParams(hash.slice(1)).get("token") ?? undefined;
  window.history.replaceState(window.history.state, "", `${window.location.pathname}${window.location.search}`);
  if (token) pending = token;
}

/** The token taken from the address bar, handed out once. */
export function consumeSignInToken(): string | undefined {
  const token = pending;
  pending = undefined;
  return token;
}

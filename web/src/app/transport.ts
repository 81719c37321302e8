import { createConnectTransport } from "@connectrpc/connect-web";

/**
 * Every call of the screen: Connect (JSON) over POST to the service's own
 * origin. The session cookie (HttpOnly, SameSite=Strict) goes with it by
 * itself; the server refuses cookie calls without the Connect protocol
 * header, from another Origin, or as GET (the session door's rules).
 */
export const transport = createConnectTransport({
  baseUrl: window.location.origin,
  useHttpGet: false,
  fetch: (input, init) => globalThis.fetch(input, { ...init, credentials: "same-origin" }),
});

import { type HandlerContext, createContextKey } from "@connectrpc/connect";
import type { AuthenticatedKey } from "../../capabilities/accounts/types.ts";

/**
 * Values the interceptors resolve once per call and the handlers read.
 * `undefined` when the operation needs no key (the handlers of such
 * operations never read it).
 */
export const kCaller = createContextKey<AuthenticatedKey | undefined>(undefined, { description: "authenticated API key" });

/** The caller of an operation that requires a key; the auth interceptor guarantees it. */
export function callerOf(ctx: HandlerContext): AuthenticatedKey {
  const caller = ctx.values.get(kCaller);
  if (!caller) throw new Error("operation requires an API key but no caller was resolved");
  return caller;
}

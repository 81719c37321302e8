import { createConnectQueryKey, useQuery } from "@connectrpc/connect-query";
import { type Session, SessionService } from "@gen/mail/v1/sessions_pb.js";
import { useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext } from "react";
import { errorMessage, isUnauthenticated } from "../errors.ts";
import { SignedOut } from "./SignedOut.tsx";

/** The scope that opens the administrators' tabs (owners and admins hold it; members do not). */
export const ADMIN_SCOPE = "mail.admin";

export interface SessionInfo {
  readonly session: Session;
  /** Mail administration (owner or admin): the API keys, Webhooks, Deliveries, Members and Audit tabs. */
  readonly isAdmin: boolean;
  hasScope(scope: string): boolean;
}

const SessionContext = createContext<SessionInfo | undefined>(undefined);

/** The member's session; only inside <RequireSession>. */
export function useSession(): SessionInfo {
  const info = useContext(SessionContext);
  if (!info) throw new Error("useSession() outside <RequireSession>");
  return info;
}

export const sessionQueryKey = createConnectQueryKey({ schema: SessionService.method.getSession, input: {}, cardinality: "finite" });

/** Forgets the session and everything read with it (after sign-out or when the server says it ended). */
export function useForgetSession(): () => void {
  const client = useQueryClient();
  return useCallback(() => {
    client.cancelQueries();
    client.removeQueries();
  }, [client]);
}

/**
 * Renders its children only for a signed-in member (GetSession answers);
 * otherwise the page that says to use a sign-in link.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const query = useQuery(SessionService.method.getSession, {}, { retry: false, staleTime: 60_000, refetchOnWindowFocus: true });
  if (query.isPending) {
    return (
      <main className="page-centered">
        <p role="status">Loading…</p>
      </main>
    );
  }
  if (query.isError || !query.data.session) {
    if (!query.isError || isUnauthenticated(query.error)) return <SignedOut />;
    return (
      <main className="page-centered">
        <h1>The administration screen is unavailable</h1>
        <p role="alert">{errorMessage(query.error)}</p>
      </main>
    );
  }
  const session = query.data.session;
  const scopes = new Set(session.scopes);
  const info: SessionInfo = { session, isAdmin: scopes.has(ADMIN_SCOPE), hasScope: (scope) => scopes.has(scope) };
  return <SessionContext value={info}>{children}</SessionContext>;
}

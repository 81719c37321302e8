import { TransportProvider } from "@connectrpc/connect-query";
import { SessionService } from "@gen/mail/v1/sessions_pb.js";
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { BrowserRouter } from "react-router";
import { isFinal, isUnauthenticated } from "./errors.ts";
import { AppRoutes } from "./routes.tsx";
import { sessionQueryKey } from "./auth/session.tsx";
import { transport } from "./transport.ts";

/** The base path the service serves the screen under (src/transport/http/admin-screen.ts). */
export const BASE_PATH = "/admin";

function matchesSession(key: readonly unknown[]): boolean {
  const described = key[1] as { serviceName?: string; methodName?: string } | undefined;
  return described?.serviceName === SessionService.typeName && described.methodName === SessionService.method.getSession.name;
}

function createQueryClient(): QueryClient {
  // A session that ended (signed out elsewhere, idle, member removed) sends every screen back to "use a sign-in link".
  const onError = (error: unknown) => {
    if (isUnauthenticated(error)) void client.invalidateQueries({ queryKey: sessionQueryKey, refetchType: "active" });
  };
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      // The session's own 401 is what <RequireSession> shows; any other read's 401 means the session just ended.
      onError: (error, query) => {
        if (!matchesSession(query.queryKey)) onError(error);
      },
    }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        retry: (count, error) => !isFinal(error) && count < 2,
        staleTime: 10_000,
        // Works offline: what was read stays on screen; reads resume when the network is back.
        networkMode: "offlineFirst",
      },
      mutations: { retry: false, networkMode: "offlineFirst" },
    },
  });
  return client;
}

const queryClient = createQueryClient();

export function App() {
  return (
    <TransportProvider transport={transport}>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter basename={BASE_PATH}>
          <AppRoutes />
        </BrowserRouter>
      </QueryClientProvider>
    </TransportProvider>
  );
}

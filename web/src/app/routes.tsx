import { Suspense } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router";
import { RequireSession, useSession } from "./auth/session.tsx";
import { SignIn } from "./auth/SignIn.tsx";
import { lazyPage, RouteBoundary, type RoutedPage } from "./RouteBoundary.tsx";
import { Shell } from "./Shell.tsx";
import MessagesPage from "../pages/messages/index.tsx";

// The administrators' pages are loaded when first opened: a member never downloads them.
const KeysPage = lazyPage(() => import("../pages/keys/index.tsx"));
const WebhooksPage = lazyPage(() => import("../pages/webhooks/index.tsx"));
const DeliveriesPage = lazyPage(() => import("../pages/deliveries/index.tsx"));
const MembersPage = lazyPage(() => import("../pages/members/index.tsx"));
const AuditPage = lazyPage(() => import("../pages/audit/index.tsx"));

/** One section of the header. `admin`: shown to owners and admins only (scope mail.admin). */
export interface Tab {
  readonly path: string;
  readonly label: string;
  readonly admin: boolean;
  readonly page: RoutedPage;
}

/** The sections, in the header's order; each is a route of its own. */
export const TABS: readonly Tab[] = [
  { path: "messages", label: "Messages", admin: false, page: MessagesPage },
  { path: "keys", label: "API keys", admin: true, page: KeysPage },
  { path: "webhooks", label: "Webhooks", admin: true, page: WebhooksPage },
  { path: "deliveries", label: "Deliveries", admin: true, page: DeliveriesPage },
  { path: "members", label: "Members", admin: true, page: MembersPage },
  { path: "audit", label: "Audit", admin: true, page: AuditPage },
];

function Loading() {
  return <p role="status">Loading…</p>;
}

/**
 * A section's page inside its own error boundary (new for each address, so
 * leaving a failed page clears the failure); an administrators' page tells
 * a member, who reaches it only by typing its address, that it is not theirs.
 */
function SectionPage({ tab }: { tab: Tab }) {
  const { isAdmin } = useSession();
  const { pathname } = useLocation();
  if (tab.admin && !isAdmin) {
    return (
      <section className="page" aria-labelledby="forbidden-title">
        <h1 id="forbidden-title">Not available</h1>
        <p>This page is for Mail administrators (owners and admins) of your company.</p>
      </section>
    );
  }
  const Page = tab.page;
  return (
    <RouteBoundary key={pathname} onRetry={Page.reload}>
      <Suspense fallback={<Loading />}>
        <Page />
      </Suspense>
    </RouteBoundary>
  );
}

function NotFound() {
  return (
    <section className="page" aria-labelledby="not-found-title">
      <h1 id="not-found-title">Page not found</h1>
      <p>There is no page at this address.</p>
    </section>
  );
}

export function AppRoutes() {
  return (
    <Routes>
      <Route path="sign-in" element={<SignIn />} />
      <Route
        element={
          <RequireSession>
            <Shell />
          </RequireSession>
        }
      >
        <Route index element={<Navigate to="messages" replace />} />
        {TABS.map((tab) => (
          <Route key={tab.path} path={`${tab.path}/*`} element={<SectionPage tab={tab} />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

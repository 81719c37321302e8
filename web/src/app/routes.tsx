import { lazy, type ReactNode, Suspense } from "react";
import { Navigate, Route, Routes } from "react-router";
import { RequireSession, useSession } from "./auth/session.tsx";
import { SignIn } from "./auth/SignIn.tsx";
import { Shell } from "./Shell.tsx";
import MessagesPage from "../pages/messages/index.tsx";

// The administrators' pages are loaded when first opened: a member never downloads them.
const KeysPage = lazy(() => import("../pages/keys/index.tsx"));
const WebhooksPage = lazy(() => import("../pages/webhooks/index.tsx"));
const DeliveriesPage = lazy(() => import("../pages/deliveries/index.tsx"));
const MembersPage = lazy(() => import("../pages/members/index.tsx"));
const AuditPage = lazy(() => import("../pages/audit/index.tsx"));

/** One tab of the header. `admin`: shown to owners and admins only (scope mail.admin). */
export interface Tab {
  readonly path: string;
  readonly label: string;
  readonly admin: boolean;
}

/** The tabs, in the header's order. A page is added here and in <AppRoutes> below. */
export const TABS: readonly Tab[] = [
  { path: "messages", label: "Messages", admin: false },
  { path: "keys", label: "API keys", admin: true },
  { path: "webhooks", label: "Webhooks", admin: true },
  { path: "deliveries", label: "Deliveries", admin: true },
  { path: "members", label: "Members", admin: true },
  { path: "audit", label: "Audit", admin: true },
];

function Loading() {
  return <p role="status">Loading…</p>;
}

/** An administrators' page: members reach it only by typing its address, and are told it is not theirs. */
function AdminOnly({ children }: { children: ReactNode }) {
  const { isAdmin } = useSession();
  if (!isAdmin) {
    return (
      <section className="page" aria-labelledby="forbidden-title">
        <h1 id="forbidden-title">Not available</h1>
        <p>This page is for Mail administrators (owners and admins) of your company.</p>
      </section>
    );
  }
  return <Suspense fallback={<Loading />}>{children}</Suspense>;
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
        <Route path="messages/*" element={<MessagesPage />} />
        <Route path="keys/*" element={<AdminOnly><KeysPage /></AdminOnly>} />
        <Route path="webhooks/*" element={<AdminOnly><WebhooksPage /></AdminOnly>} />
        <Route path="deliveries/*" element={<AdminOnly><DeliveriesPage /></AdminOnly>} />
        <Route path="members/*" element={<AdminOnly><MembersPage /></AdminOnly>} />
        <Route path="audit/*" element={<AdminOnly><AuditPage /></AdminOnly>} />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

import { Suspense } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router";
import { RequireSession, useSession } from "./auth/session.tsx";
import { SignIn } from "./auth/SignIn.tsx";
import { lazyPage, RouteBoundary, type RoutedPage } from "./RouteBoundary.tsx";
import { Shell } from "./Shell.tsx";
import { Page } from "../components/Page.tsx";
import MessagesPage from "../pages/messages/index.tsx";

// Every page but the message log is loaded when first opened: a member never downloads the administrators' pages.
const ContactsPage = lazyPage(() => import("../pages/contacts/index.tsx"));
const ListsPage = lazyPage(() => import("../pages/lists/index.tsx"));
const FormsPage = lazyPage(() => import("../pages/forms/index.tsx"));
const KeysPage = lazyPage(() => import("../pages/keys/index.tsx"));
const WebhooksPage = lazyPage(() => import("../pages/webhooks/index.tsx"));
const DeliveriesPage = lazyPage(() => import("../pages/deliveries/index.tsx"));
const MembersPage = lazyPage(() => import("../pages/members/index.tsx"));
const AuditPage = lazyPage(() => import("../pages/audit/index.tsx"));
const SuppressionsPage = lazyPage(() => import("../pages/suppressions/index.tsx"));
const CreditsPage = lazyPage(() => import("../pages/credits/index.tsx"));
const TemplatesPage = lazyPage(() => import("../pages/templates/index.tsx"));

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
  { path: "contacts", label: "Contacts", admin: false, page: ContactsPage },
  { path: "lists", label: "Lists", admin: true, page: ListsPage },
  { path: "forms", label: "Forms", admin: false, page: FormsPage },
  { path: "templates", label: "Templates", admin: false, page: TemplatesPage },
  { path: "suppressions", label: "Suppressions", admin: false, page: SuppressionsPage },
  { path: "credits", label: "Credits", admin: false, page: CreditsPage },
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
      <Page title="Not available">
        <p>This page is for Mail administrators (owners and admins) of your company.</p>
      </Page>
    );
  }
  const Section = tab.page;
  return (
    <RouteBoundary key={pathname} onRetry={Section.reload}>
      <Suspense fallback={<Loading />}>
        <Section />
      </Suspense>
    </RouteBoundary>
  );
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>There is no page at this address.</p>
    </Page>
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

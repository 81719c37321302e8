import { Suspense } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router";
import { RequireSession, useSession } from "./auth/session.tsx";
import { SignIn } from "./auth/SignIn.tsx";
import { RouteBoundary } from "./RouteBoundary.tsx";
import { Shell } from "./Shell.tsx";
import { type Tab, TABS } from "./tabs.ts";
import { Page } from "../components/Page.tsx";

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
        <Route index element={<Navigate to="overview" replace />} />
        {TABS.map((tab) => (
          <Route key={tab.path} path={`${tab.path}/*`} element={<SectionPage tab={tab} />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

import { useMutation } from "@connectrpc/connect-query";
import { SessionService } from "@gen/mail/v1/sessions_pb.js";
import { useState } from "react";
import { NavLink, Outlet } from "react-router";
import { useForgetSession, useSession } from "./auth/session.tsx";
import { SignedOut } from "./auth/SignedOut.tsx";
import { errorMessage } from "./errors.ts";
import { TABS } from "./routes.tsx";

/** The frame of every signed-in page: the company, the member, the role's tabs, sign out, and the page. */
export function Shell() {
  const { session, isAdmin } = useSession();
  const forget = useForgetSession();
  const [signedOut, setSignedOut] = useState(false);
  const signOut = useMutation(SessionService.method.signOut, {
    onSuccess: () => {
      setSignedOut(true);
      forget();
    },
  });
  if (signedOut) return <SignedOut reason="You are signed out." />;

  const member = session.member;
  const name = member?.displayName || member?.email || "";
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="shell-header">
        <div className="shell-brand">
          <span className="shell-product">Mail</span>
          <span className="shell-company">{session.company?.name}</span>
        </div>
        <nav className="shell-tabs" aria-label="Sections">
          <ul>
            {TABS.filter((tab) => isAdmin || !tab.admin).map((tab) => (
              <li key={tab.path}>
                <NavLink to={`/${tab.path}`}>{tab.label}</NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="shell-member">
          <span className="shell-member-name" title={member?.email}>
            {name}
          </span>
          <button type="button" className="button button-quiet" onClick={() => signOut.mutate({})} disabled={signOut.isPending}>
            Sign out
          </button>
        </div>
      </header>
      {signOut.isError ? (
        <p role="alert" className="shell-alert">
          {errorMessage(signOut.error)}
        </p>
      ) : null}
      <main id="main" className="shell-main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}

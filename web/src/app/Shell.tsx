import { useMutation } from "@connectrpc/connect-query";
import { SessionService } from "@gen/mail/v1/sessions_pb.js";
import { useEffect, useId, useRef, useState } from "react";
import { NavLink, Outlet, useLocation } from "react-router";
import { useForgetSession, useSession } from "./auth/session.tsx";
import { SignedOut } from "./auth/SignedOut.tsx";
import { errorMessage } from "./errors.ts";
import { TABS } from "./tabs.ts";
import { HeaderBalance, LowCreditsBanner } from "../pages/credits/balance.tsx";
import { SendingSuspendedBanner } from "../pages/sending-status/banner.tsx";

/** The frame of every signed-in page: the company, the role's sections, the member, sign out, and the page. */
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
        <Sections isAdmin={isAdmin} />
        <div className="shell-member">
          <HeaderBalance />
          <span className="shell-member-name" title={member?.email}>
            {name}
          </span>
          <button type="button" className="button" onClick={() => signOut.mutate({})} disabled={signOut.isPending}>
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
        <SendingSuspendedBanner />
        <LowCreditsBanner />
        <Outlet />
      </main>
    </div>
  );
}

/**
 * The role's sections: a row of links on a wide screen; on a narrow one a
 * "Menu" button (a disclosure, named with the current section) that shows
 * them as a list. Escape, a click elsewhere or choosing a section closes it.
 */
function Sections({ isAdmin }: { isAdmin: boolean }) {
  const listId = useId();
  const nav = useRef<HTMLElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const { pathname } = useLocation();
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (!open) return;
    const closeOutside = (event: PointerEvent) => {
      if (nav.current && event.target instanceof Node && !nav.current.contains(event.target)) setOpen(false);
    };
    document.addEventListener("pointerdown", closeOutside);
    return () => document.removeEventListener("pointerdown", closeOutside);
  }, [open]);

  const tabs = TABS.filter((tab) => isAdmin || !tab.admin);
  const current = tabs.find((tab) => pathname === `/${tab.path}` || pathname.startsWith(`/${tab.path}/`));
  return (
    <nav
      ref={nav}
      className="shell-nav"
      aria-label="Sections"
      data-open={open}
      onKeyDown={(event) => {
        if (event.key === "Escape" && open) {
          setOpen(false);
          button.current?.focus();
        }
      }}
    >
      <button
        ref={button}
        type="button"
        className="button shell-menu-button"
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen(!open)}
      >
        Menu{current ? `: ${current.label}` : ""}
      </button>
      <ul id={listId}>
        {tabs.map((tab) => (
          <li key={tab.path}>
            {/* A section chosen: the menu has done its work. */}
            <NavLink to={`/${tab.path}`} onClick={() => setOpen(false)}>
              {tab.label}
            </NavLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}

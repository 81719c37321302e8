import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Members, Sessions } from "../../../capabilities/members/index.ts";
import type { SessionService } from "../../../gen/mail/v1/sessions_pb.js";
import { callerOf } from "../context.ts";
import { checkBrowserCall, clearedSessionCookie, sessionCookie } from "../session-cookie.ts";
import { exchangeSignInLinkCommand, sessionMemberCommand, sessionMessage, signOutCommand } from "./mapping.ts";

export interface SessionServiceDeps {
  readonly sessions: Sessions;
  readonly members: Members;
  /** Origins a browser call may come from besides the request's own Host (PUBLIC_BASE_URL's). */
  readonly allowedOrigins: readonly string[];
  /** The time the cookie's lifetime is counted from. Default: the system clock. */
  readonly clock?: () => Date;
}

/**
 * The session door (SessionService): the sign-in exchange sets the cookie,
 * GetSession describes it, SignOut ends it. Browser rules on every call
 * (the auth step applies them to GetSession and SignOut; the exchange,
 * public, applies them here).
 */
export function sessionServiceImpl(deps: SessionServiceDeps): ServiceImpl<typeof SessionService> {
  const now = deps.clock ?? (() => new Date());
  return {
    async exchangeSignInLink(req, ctx: HandlerContext) {
      checkBrowserCall(ctx.requestHeader, ctx.requestMethod, deps.allowedOrigins);
      const { secret, session } = await deps.sessions.exchange(exchangeSignInLinkCommand(req, ctx));
      ctx.responseHeader.append("set-cookie", sessionCookie(secret, (session.expiresAt.getTime() - now().getTime()) / 1000));
      return { session: sessionMessage(session.member, session.company, session.expiresAt) };
    },
    async getSession(_req, ctx) {
      const member = await deps.members.get(sessionMemberCommand(ctx));
      const caller = callerOf(ctx);
      return { session: sessionMessage(member, { id: caller.companyId, name: caller.companyName }, caller.expiresAt ?? now()) };
    },
    async signOut(_req, ctx) {
      const command = signOutCommand(ctx);
      if (command) await deps.sessions.signOut(command);
      ctx.responseHeader.append("set-cookie", clearedSessionCookie());
      return {};
    },
  };
}

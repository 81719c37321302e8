import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MemberRecord, MembersService, SessionsService } from "../../../capabilities/members/index.ts";
import { scopesOfRole } from "../../../capabilities/members/roles.ts";
import { type Session, SessionSchema, SessionService } from "../../../gen/mail/v1/sessions_pb.js";
import { CLIENT_ADDRESS_HEADER } from "../../http/request-context.ts";
import { callerOf } from "../context.ts";
import { memberMessage } from "../members/index.ts";
import { checkBrowserCall, clearedSessionCookie, sessionCookie, sessionCookieValue } from "../session-cookie.ts";
import { optionalTimestamp } from "../timestamps.ts";

export interface SessionServiceDeps {
  readonly sessions: SessionsService;
  readonly members: MembersService;
  /** Origins a browser call may come from besides the request's own Host (PUBLIC_BASE_URL's). */
  readonly allowedOrigins: readonly string[];
  readonly clock?: () => Date;
}

function sessionMessage(member: MemberRecord, company: { id: string; name: string }, expiresAt: Date): Session {
  return create(SessionSchema, {
    member: memberMessage(member),
    company: { id: company.id, name: company.name },
    scopes: [...scopesOfRole(member.role)],
    expiresAt: optionalTimestamp(expiresAt),
  });
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
      const { secret, session } = await deps.sessions.exchange({
        token: req.token,
        clientAddress: ctx.requestHeader.get(CLIENT_ADDRESS_HEADER) ?? "",
      });
      ctx.responseHeader.append("set-cookie", sessionCookie(secret, (session.expiresAt.getTime() - now().getTime()) / 1000));
      return { session: sessionMessage(session.member, session.company, session.expiresAt) };
    },
    async getSession(_req, ctx) {
      const caller = callerOf(ctx);
      if (caller.actor.kind !== "member") throw new Error("GetSession needs a member session");
      const member = await deps.members.get({ companyId: caller.companyId, memberId: caller.actor.memberId });
      return { session: sessionMessage(member, { id: caller.companyId, name: caller.companyName }, caller.expiresAt ?? now()) };
    },
    async signOut(_req, ctx) {
      const secret = sessionCookieValue(ctx.requestHeader.get("cookie"));
      if (secret) await deps.sessions.signOut(secret);
      ctx.responseHeader.append("set-cookie", clearedSessionCookie());
      return {};
    },
  };
}

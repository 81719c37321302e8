import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { ExchangeSignInLinkCommand, GetMemberCommand, MemberRecord, SignOutCommand } from "../../../capabilities/members/index.ts";
import { scopesOfRole } from "../../../capabilities/members/roles.ts";
import { type ExchangeSignInLinkRequest, type Session, SessionSchema } from "../../../gen/mail/v1/sessions_pb.js";
import { CLIENT_ADDRESS_HEADER } from "../../http/request-context.ts";
import { callerOf } from "../context.ts";
import { memberMessage } from "../members/mapping.ts";
import { sessionCookieValue } from "../session-cookie.ts";
import { optionalTimestamp } from "../timestamps.ts";

/** The SessionService's proto <-> domain mapping, both directions (the cookie itself is session-cookie.ts's). */

export function sessionMessage(member: MemberRecord, company: { id: string; name: string }, expiresAt: Date): Session {
  return create(SessionSchema, {
    member: memberMessage(member),
    company: { id: company.id, name: company.name },
    scopes: [...scopesOfRole(member.role)],
    expiresAt: optionalTimestamp(expiresAt),
  });
}

export function exchangeSignInLinkCommand(req: ExchangeSignInLinkRequest, ctx: HandlerContext): ExchangeSignInLinkCommand {
  return { token: req.token, clientAddress: ctx.requestHeader.get(CLIENT_ADDRESS_HEADER) ?? "" };
}

/** GetSession: the signed-in member, as stored now (a role changed since sign-in shows). */
export function sessionMemberCommand(ctx: HandlerContext): GetMemberCommand {
  const caller = callerOf(ctx);
  if (caller.actor.kind !== "member") throw new Error("GetSession needs a member session");
  return { companyId: caller.companyId, memberId: caller.actor.memberId };
}

/** SignOut: the session of the request's cookie; none when it carries none. */
export function signOutCommand(ctx: HandlerContext): SignOutCommand | undefined {
  const secret = sessionCookieValue(ctx.requestHeader.get("cookie"));
  return secret ? { secret } : undefined;
}

/**
 * Helpers of the members / sessions / api-keys / audit / principal tests:
 * a "browser" that signs in with a one-time link and then calls
 * the Connect JSON protocol with the session cookie, the way the
 * administration screen does (fetch keeps the cookie; here we keep it).
 */
import { MemberRole, MembersService } from "../../src/gen/mail/v1/members_pb.js";
import type { ApiHarness } from "../support/api-harness.ts";

export const SESSION_COOKIE = "__Host-mail_session";

export interface ConnectAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Headers;
}

/** The error code of a Connect JSON error answer (the ErrorInfo reason), e.g. `SIGN_IN_LINK_INVALID`. */
export function reasonOf(answer: ConnectAnswer): string {
  const details = (answer.body.details ?? []) as { type?: string; debug?: { reason?: string } }[];
  const info = details.find((d) => d.type === "google.rpc.ErrorInfo");
  return info?.debug?.reason ?? String(answer.body.code ?? "");
}

/** Headers of a call from the screen: Connect JSON, our own Origin. */
export function browserHeaders(origin: string, cookie?: string, forwardedFor?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "connect-protocol-version": "1",
    origin,
    ...(cookie ? { cookie: `${SESSION_COOKIE}=${cookie}` } : {}),
    ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}),
  };
}

export async function connectCall(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  method: "POST" | "GET" = "POST",
): Promise<ConnectAnswer> {
  const response = await fetch(new URL(path, baseUrl), { method, headers, ...(method === "POST" ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { raw: text };
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** The session cookie's value in a Set-Cookie answer, and its attributes. */
export function sessionCookieOf(headers: Headers): { value: string; attributes: string } | undefined {
  for (const line of headers.getSetCookie()) {
    if (line.startsWith(`${SESSION_COOKIE}=`)) {
      const [pair = "", ...rest] = line.split(";");
      return { value: pair.slice(SESSION_COOKIE.length + 1), attributes: rest.join(";").trim() };
    }
  }
  return undefined;
}

export function tokenOf(signInUrl: string): string {
  const token = new URL(signInUrl).hash.replace(/^#token=/, "");
  if (!token) throw new Error(`no token in ${signInUrl}`);
  return token;
}

let address = 0;
/** A distinct client address per browser (TEST-NET-3), so per-address budgets do not mix between tests. */
export function nextAddress(): string {
  address += 1;
  return `203.0.113.${address % 250}`;
}

export class Browser {
  cookie: string | undefined;
  readonly h: ApiHarness;
  readonly address: string;

  constructor(h: ApiHarness, address = nextAddress()) {
    this.h = h;
    this.address = address;
  }

  get origin(): string {
    return new URL(this.h.app.httpUrl).origin;
  }

  async exchange(token: string): Promise<ConnectAnswer> {
    const answer = await connectCall(this.h.app.httpUrl, "/mail.v1.SessionService/ExchangeSignInLink", { token }, browserHeaders(this.origin, undefined, this.address));
    const cookie = sessionCookieOf(answer.headers);
    if (cookie) this.cookie = cookie.value;
    return answer;
  }

  /** A Connect call as the screen makes it, e.g. call("mail.v1.MembersService", "ListMembers", {}). */
  call(service: string, method: string, body: unknown = {}, extra: Record<string, string> = {}): Promise<ConnectAnswer> {
    return connectCall(this.h.app.httpUrl, `/${service}/${method}`, body, { ...browserHeaders(this.origin, this.cookie, this.address), ...extra });
  }
}

const ROLES = { owner: MemberRole.OWNER, admin: MemberRole.ADMIN, member: MemberRole.MEMBER } as const;

/**
 * A new member invited by the operator (MembersService with the company
 * header, any role), signed in: a browser holding their session. With a
 * system sender the invite is emailed to them; the operator then hands over
 * a link of their own (AdminService.CreateSignInLink).
 */
export async function signedIn(h: ApiHarness, companyId: string, email: string, role: keyof typeof ROLES): Promise<Browser> {
  const invited = await h.forCompany(MembersService, companyId).inviteMember({ email, role: ROLES[role] });
  const signInUrl = invited.emailed ? (await h.admin.createSignInLink({ companyId, email })).signInUrl : invited.signInUrl;
  const browser = new Browser(h);
  const answer = await browser.exchange(tokenOf(signInUrl));
  if (answer.status !== 200 || !browser.cookie) throw new Error(`sign-in failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return browser;
}

export async function newCompany(h: ApiHarness, name: string): Promise<string> {
  const { company } = await h.admin.createCompany({ name, entitlements: { api: true, smtp: false } });
  return company?.id ?? "";
}

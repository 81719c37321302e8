import type { Services } from "./services.ts";
import { API_KEY_SCOPES } from "../capabilities/accounts/scopes.ts";
import type { CompanyView } from "../capabilities/accounts/views.ts";
import { type AuditContext, OPERATOR_ACTOR } from "../capabilities/audit/types.ts";
import type { Page } from "../capabilities/shared/paging.ts";
import { apiErrorFrom } from "../contract/api-error.ts";

/**
 * `npm start`'s demo company (development mode only, src/main.ts): a company
 * that can send through the simulator at once, with a key holding every
 * scope (never in production), a domain verified by operator override, a
 * default sender, credits, and an owner who signs in to the administration
 * screen.
 *
 * It is found by its name (the oldest company of that name), not by the
 * database being empty: companies created before it (a script that did not
 * wait for /readyz) never stop it from being made. Each step does only what
 * is missing, and the key, printed once, comes last, so a start stopped
 * half-way is finished by the next one and a seeded company is left alone.
 */
export const DEMO_COMPANY_NAME = "Demo Company";
const DEMO_KEY_NAME = "demo key";
const DEMO_DOMAIN = "demo.example";
const DEMO_SENDER = "hello@demo.example";
const DEMO_OWNER = "owner@demo.example";
const DEMO_CREDITS = 1000;
const DEMO_CREDITS_NOTE = "demo credits";

type DemoParts = Pick<Services, "accounts" | "sendingSetup" | "credits" | "members">;

/** `npm start` acts as the operator. */
const audit: AuditContext = { actor: OPERATOR_ACTOR, requestId: "npm-start", clientIp: "" };
const acting = { audit, role: undefined };

async function demoCompany(app: DemoParts): Promise<CompanyView | undefined> {
  return (await app.accounts.companies.list()).find((company) => company.name === DEMO_COMPANY_NAME);
}

/** Whether any item of a paged list (members, keys) passes `test`, reading page after page. */
async function anyOf<T>(list: (cursor: string | undefined) => Promise<Page<T>>, test: (item: T) => boolean): Promise<boolean> {
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    if (page.items.some(test)) return true;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return false;
}

/** Makes what the demo company still lacks; prints its API key when it makes it. */
export async function seedDemoCompany(app: DemoParts, print: (line: string) => void): Promise<void> {
  const company = (await demoCompany(app)) ?? (await app.accounts.companies.create({ name: DEMO_COMPANY_NAME, entitlements: { api: true, smtp: false } }));
  const companyId = company.id;

  const { domains, senders } = app.sendingSetup;
  const domain =
    (await domains.list({ companyId })).find((d) => d.domain === DEMO_DOMAIN) ?? (await domains.create({ companyId, domain: DEMO_DOMAIN, audit }));
  if (!domain.verified) await domains.overrideVerification({ companyId, domainId: domain.id, audit });
  if (!(await senders.list({ companyId })).some((sender) => sender.email === DEMO_SENDER)) {
    await senders.create({ companyId, email: DEMO_SENDER, name: "Demo", makeDefault: true, audit });
  }
  const granted = (await app.credits.ledger({ companyId, reason: "grant", limit: 100 })).items.some((entry) => entry.note === DEMO_CREDITS_NOTE);
  if (!granted) await app.credits.adjust({ companyId, amount: DEMO_CREDITS, note: DEMO_CREDITS_NOTE });
  const { members } = app.members;
  if (!(await anyOf((cursor) => members.list({ companyId, cursor }), (member) => member.email === DEMO_OWNER))) {
    await members.invite({ companyId, email: DEMO_OWNER, displayName: "Demo Owner", role: "owner", acting });
  }

  const { keys } = app.accounts;
  if (await anyOf((cursor) => keys.list({ companyId, cursor }), (key) => key.name === DEMO_KEY_NAME)) return;
  const { secret } = await keys.create({ companyId, name: DEMO_KEY_NAME, scopes: API_KEY_SCOPES, grantableScopes: API_KEY_SCOPES, audit });
  print(`\nDemo company ${companyId} created, sending as ${DEMO_SENDER} with ${DEMO_CREDITS} credits.`);
  print(`Its API key (shown once, keep it):\n\n    ${secret}\n`);
}

/** A fresh one-time sign-in link for the demo owner, at every start (links last 15 minutes). */
export async function printDemoSignInLink(app: DemoParts, print: (line: string) => void): Promise<void> {
  const company = await demoCompany(app);
  if (!company) return;
  // No link when the demo owner was removed (NOT_FOUND) or disabled (VALIDATION_ERROR) since.
  const link = await app.members.members.createSignInLink({ companyId: company.id, email: DEMO_OWNER, acting }).catch((error: unknown) => {
    const code = apiErrorFrom(error)?.code;
    if (code === "NOT_FOUND" || code === "VALIDATION_ERROR") return undefined;
    throw error;
  });
  if (!link) return;
  print(`Sign in to the administration screen as ${DEMO_OWNER} (one use, until ${link.expiresAt.toISOString()}):\n\n    ${link.signInUrl}\n`);
}

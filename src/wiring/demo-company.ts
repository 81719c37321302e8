import type { Services } from "./services.ts";
import { API_KEY_SCOPES } from "../capabilities/accounts/scopes.ts";
import type { CompanyView } from "../capabilities/accounts/views.ts";
import { OPERATOR_ACTOR } from "../capabilities/audit/types.ts";

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

const acting = { audit: { actor: OPERATOR_ACTOR, requestId: "npm-start", clientIp: "" }, role: undefined };

async function demoCompany(app: DemoParts): Promise<CompanyView | undefined> {
  return (await app.accounts.service.listCompanies()).find((company) => company.name === DEMO_COMPANY_NAME);
}

/** Makes what the demo company still lacks; prints its API key when it makes it. */
export async function seedDemoCompany(app: DemoParts, print: (line: string) => void): Promise<void> {
  const company = (await demoCompany(app)) ?? (await app.accounts.service.createCompany(DEMO_COMPANY_NAME, { api: true, smtp: false }));
  const companyId = company.id;

  const { domains, senders } = app.sendingSetup;
  const domain = (await domains.listDomains(companyId)).find((d) => d.domain === DEMO_DOMAIN) ?? (await domains.createDomain(companyId, DEMO_DOMAIN));
  if (!domain.verified) await domains.verifyDomain(companyId, domain.id, { override: true });
  if (!(await senders.listSenders(companyId)).some((sender) => sender.email === DEMO_SENDER)) {
    await senders.createSender(companyId, { email: DEMO_SENDER, name: "Demo", makeDefault: true });
  }
  const granted = (await app.credits.ledger({ companyId, reason: "grant", limit: 100 })).items.some((entry) => entry.note === DEMO_CREDITS_NOTE);
  if (!granted) await app.credits.adjust({ companyId, amount: DEMO_CREDITS, note: DEMO_CREDITS_NOTE });
  if (!(await app.members.members.list({ companyId })).some((member) => member.email === DEMO_OWNER)) {
    await app.members.members.add({ companyId, email: DEMO_OWNER, displayName: "Demo Owner", role: "owner", acting });
  }

  if ((await app.accounts.service.listApiKeys(companyId)).some((key) => key.name === DEMO_KEY_NAME)) return;
  const { secret } = await app.accounts.service.createApiKey(companyId, DEMO_KEY_NAME, [...API_KEY_SCOPES]);
  print(`\nDemo company ${companyId} created, sending as ${DEMO_SENDER} with ${DEMO_CREDITS} credits.`);
  print(`Its API key (shown once, keep it):\n\n    ${secret}\n`);
}

/** A fresh one-time sign-in link for the demo owner, at every start (links last 15 minutes). */
export async function printDemoSignInLink(app: DemoParts, print: (line: string) => void): Promise<void> {
  const company = await demoCompany(app);
  if (!company) return;
  const owner = (await app.members.members.list({ companyId: company.id })).find((m) => m.email === DEMO_OWNER && !m.disabled);
  if (!owner) return;
  const link = await app.members.members.createSignInLink({ companyId: company.id, email: owner.email, acting });
  print(`Sign in to the administration screen as ${owner.email} (one use, until ${link.expiresAt.toISOString()}):\n\n    ${link.signInUrl}\n`);
}

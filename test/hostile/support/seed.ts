import { randomBytes } from "node:crypto";
import { SignupFormsService } from "../../../src/gen/mail/v1/forms_pb.js";
import { TemplatesService } from "../../../src/gen/mail/v1/templates_pb.js";
import { PUBLIC_HOOK_HOST, type HostileApi, type Tenant } from "./hostile-api.ts";

/**
 * A tenant with one or more of everything an id can name: messages,
 * contacts, a list, a webhook endpoint and its deliveries, a store
 * integration, a template, a sender, a sending domain and a sign-up form.
 * Built through the doors a customer and an operator use (the JSON routes,
 * the AdminService and the company services on the operator listener),
 * never by writing rows.
 */
export interface SeededTenant extends Tenant {
  readonly name: string;
  readonly domainId: string;
  /** The sending domain's name (its senders' addresses end with it). */
  readonly domainName: string;
  readonly senderId: string;
  readonly templateId: string;
  /** Oldest first. */
  readonly messageIds: readonly string[];
  readonly contactIds: readonly string[];
  readonly contactEmails: readonly string[];
  readonly listId: string;
  readonly endpointId: string;
  readonly deliveryIds: readonly string[];
  readonly integrationId: string;
  readonly formPublicId: string;
}

function expectStatus(what: string, answer: { status: number; text: string }, status: number): void {
  if (answer.status !== status) throw new Error(`seeding: ${what} answered ${answer.status}, not ${status}: ${answer.text.slice(0, 300)}`);
}

export async function seedTenant(api: HostileApi, name: string, rows = 3): Promise<SeededTenant> {
  const tenant = await api.newTenant(name);
  const { companyId } = tenant;
  const admin = api.h.admin;
  const tag = randomBytes(4).toString("hex");

  const domainName = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${tag}.example`;
  const { domain } = await admin.createSendingDomain({ companyId, domain: domainName });
  const domainId = domain?.id ?? "";
  await admin.verifySendingDomain({ companyId, domainId, override: true });
  const { sender } = await admin.createSender({ companyId, email: `receipts@${domainName}`, name: name, makeDefault: true });
  await admin.adjustCredits({ companyId, amount: 1000n, note: "hostile-input tests" });
  const { template } = await api.h.forCompany(TemplatesService, companyId).putTemplate({ name: `welcome-${tag}`, subject: "Hello {{ name }}", html: "<p>Hi {{ name }}</p>" });
  const { form } = await api.h.forCompany(SignupFormsService, companyId).createForm({
    name: `${name} news`,
    fields: [{ name: "email", label: "Email", type: "email", required: true }],
    consentText: "Send me news.",
    language: "en",
  });

  // The endpoint first: it receives the events recorded after it exists.
  const endpoint = await api.rest(tenant, "POST", "/mail/v1/webhooks", {
    url: `https://${PUBLIC_HOOK_HOST}/${tag}`,
    events: ["contact.updated"],
  });
  expectStatus("create webhook endpoint", endpoint, 201);
  const endpointId = (endpoint.json as { endpoint: { id: string } }).endpoint.id;

  const list = await api.rest(tenant, "POST", "/mail/v1/lists", { name: `customers ${tag}` });
  expectStatus("create list", list, 201);
  const listId = (list.json as { list: { id: string } }).list.id;

  const contactIds: string[] = [];
  const contactEmails: string[] = [];
  const messageIds: string[] = [];
  for (let i = 0; i < rows; i++) {
    const email = `person${i}-${tag}@customers.example`;
    const contact = await api.rest(tenant, "POST", "/mail/v1/contacts", { email, firstName: `Person ${i}`, listIds: [listId], tags: ["seed"] });
    expectStatus("upsert contact", contact, 200);
    contactIds.push((contact.json as { id: string }).id);
    contactEmails.push(email);
    const sent = await api.rest(tenant, "POST", "/mail/v1/send", { to: email, subject: `Order ${i}`, html: `<p>Order ${i}</p>`, tags: { seed: "yes" } });
    expectStatus("send", sent, 202);
    messageIds.push((sent.json as { id: string }).id);
  }

  const store = await api.rest(tenant, "POST", "/mail/v1/integrations/stores", { provider: "woocommerce", siteUrl: `https://shop-${tag}.example.com` });
  expectStatus("connect store", store, 201);
  const integrationId = (store.json as { integration: { id: string } }).integration.id;

  const deliveryIds = await waitForDeliveries(api, tenant, rows);
  return {
    ...tenant,
    name,
    domainId,
    domainName,
    senderId: sender?.id ?? "",
    templateId: template?.id ?? "",
    messageIds,
    contactIds,
    contactEmails,
    listId,
    endpointId,
    deliveryIds,
    integrationId,
    formPublicId: form?.publicId ?? "",
  };
}

/** Deliveries are fanned out from the event outbox by the relay, shortly after the events. */
async function waitForDeliveries(api: HostileApi, tenant: Tenant, atLeast: number): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await api.rest(tenant, "GET", "/mail/v1/webhooks/deliveries?limit=100");
    const ids = ((answer.json as { items?: { id: string }[] }).items ?? []).map((d) => d.id);
    if (ids.length >= atLeast) return ids;
    if (Date.now() > deadline) throw new Error(`seeding: ${ids.length} webhook deliveries after 20 s, expected ${atLeast}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

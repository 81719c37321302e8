import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { FastifyServerOptions } from "fastify";
import { type App, startApp } from "../../src/wiring/api.ts";
import type { AccountsOptions } from "../../src/wiring/accounts.ts";
import type { WebhookDeliveryOptions } from "../../src/wiring/webhooks.ts";
import type { DeliveryReportsOptions } from "../../src/wiring/delivery-reports.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { API_KEY_SCOPES } from "../../src/capabilities/accounts/scopes.ts";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { type Domain, DomainsService, type Sender, SendersService } from "../../src/gen/mail/v1/domains_pb.js";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

export const OPERATOR_TOKEN = "test-operator-token-0123456789";

export const ALL_SCOPES: string[] = [...API_KEY_SCOPES];

/**
 * A real API process for tests: a fresh PostgreSQL database, migrations,
 * every listener on free ports, and an AdminService client (Connect over
 * HTTP/1.1, on the operator listener) holding the operator token.
 */
export interface ApiHarness {
  readonly app: App;
  readonly db: TestDatabase;
  readonly admin: AdminClient;
  /** A company with the mail API enabled, and a key holding `scopes`. */
  newCompanyWithKey(scopes?: string[], name?: string): Promise<{ companyId: string; keyId: string; secret: string }>;
  newKey(companyId: string, scopes: string[], name?: string): Promise<{ keyId: string; secret: string }>;
  /** A client of a company service on the operator listener, acting for `companyId` (operator token + x-mail-company-id). */
  forCompany<S extends DescService>(service: S, companyId: string): Client<S>;
  /** fetch() against the HTTP/1.1 listener. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Another API process on the same database (for cross-process rules). */
  startSecondInstance(): Promise<App>;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    httpPort: 0,
    grpcPort: 0,
    operatorPort: 0,
    operatorToken: OPERATOR_TOKEN,
    apiKeyPepper: "test-pepper",
    keyUsageFlushMs: 200,
    logLevel: "warn",
    ...overrides,
  };
}

/**
 * A company's sending setup as many tests make it, by company id: each
 * shortcut calls the company service (DomainsService, SendersService) as the
 * operator acting for the company, or, for `override`, the AdminService's
 * verification override.
 */
export interface SendingSetupShortcuts {
  createSendingDomain(req: { companyId: string; domain: string }): Promise<{ domain?: Domain | undefined }>;
  /** Checks DNS now, or with `override` marks the domain verified without DNS. */
  verifySendingDomain(req: { companyId: string; domainId: string; override?: boolean }): Promise<{ domain?: Domain | undefined }>;
  listSendingDomains(req: { companyId: string }): Promise<{ domains: Domain[] }>;
  createSender(req: { companyId: string; email: string; name?: string; makeDefault?: boolean }): Promise<{ sender?: Sender | undefined }>;
  listSenders(req: { companyId: string }): Promise<{ senders: Sender[] }>;
  setDefaultSender(req: { companyId: string; senderId: string }): Promise<{ sender?: Sender | undefined }>;
}

/** The AdminService client holding the operator token, with the sending-setup shortcuts. */
export type AdminClient = Client<typeof AdminService> & SendingSetupShortcuts;

export function adminClient(baseUrl: string): AdminClient {
  const operator: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    return next(req);
  };
  const admin = createClient(AdminService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [operator] }));
  const domains = (companyId: string) => operatorClient(baseUrl, DomainsService, companyId);
  const senders = (companyId: string) => operatorClient(baseUrl, SendersService, companyId);
  const shortcuts: SendingSetupShortcuts = {
    createSendingDomain: ({ companyId, domain }) => domains(companyId).createDomain({ domain }),
    verifySendingDomain: ({ companyId, domainId, override }) =>
      override ? admin.overrideDomainVerification({ companyId, domainId }) : domains(companyId).checkDomain({ id: domainId }),
    listSendingDomains: async ({ companyId }) => ({ domains: (await domains(companyId).listDomains({})).items }),
    createSender: ({ companyId, ...sender }) => senders(companyId).createSender(sender),
    listSenders: async ({ companyId }) => ({ senders: (await senders(companyId).listSenders({})).items }),
    setDefaultSender: ({ companyId, senderId }) => senders(companyId).setDefaultSender({ id: senderId }),
  };
  return Object.assign(admin, shortcuts);
}

/**
 * A client of a company service (ListsService, WebhooksService, ...) on the
 * operator listener at `baseUrl`, acting for `companyId`: the operator token
 * plus the x-mail-company-id header.
 */
export function operatorClient<S extends DescService>(baseUrl: string, service: S, companyId: string): Client<S> {
  const operator: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
    req.header.set("x-mail-company-id", companyId);
    return next(req);
  };
  return createClient(service, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [operator] }));
}

/** What a test passes in code to the service it starts (never from the environment). */
export interface ApiHarnessOptions {
  /** Loopback receivers, a test CA, a short schedule, a clock (src/wiring/webhooks.ts). */
  readonly webhookDelivery?: WebhookDeliveryOptions;
  /** The service's logger (default: warnings, to the console); a test of the logs passes a stream. */
  readonly logger?: FastifyServerOptions["logger"];
  /** The HTTPS agent SNS is reached through (src/wiring/delivery-reports.ts): the fake SNS. */
  readonly deliveryReports?: DeliveryReportsOptions;
  /** The accounts capability's settings, e.g. a clock the test moves (src/wiring/accounts.ts). */
  readonly accounts?: AccountsOptions;
}

export async function startApiHarness(overrides: Partial<Config> = {}, options: ApiHarnessOptions = {}): Promise<ApiHarness> {
  const db = await createTestDatabase();
  const config = testConfig(overrides);
  const webhooks = {
    ...(options.webhookDelivery ? { webhookDelivery: options.webhookDelivery } : {}),
    ...(options.deliveryReports ? { deliveryReports: options.deliveryReports } : {}),
  };
  const accounts = options.accounts ? { accounts: options.accounts } : {};
  const logger = options.logger ?? { level: "warn" };
  const app = await startApp({ config, databaseUrl: db.url, logger, ...webhooks, ...accounts });
  const admin = adminClient(app.operatorUrl);
  const others: App[] = [];

  const newKey = async (companyId: string, scopes: string[], name = "test key") => {
    const created = await operatorClient(app.operatorUrl, ApiKeysService, companyId).createApiKey({ name, scopes });
    return { keyId: created.key?.id ?? "", secret: created.secret };
  };

  return {
    app,
    db,
    admin,
    newKey,
    forCompany: (service, companyId) => operatorClient(app.operatorUrl, service, companyId),
    async newCompanyWithKey(scopes = ALL_SCOPES, name = "Acme Inc.") {
      const { company } = await admin.createCompany({ name, entitlements: { api: true, smtp: false } });
      const companyId = company?.id ?? "";
      return { companyId, ...(await newKey(companyId, scopes)) };
    },
    fetch: (path, init) => fetch(new URL(path, app.httpUrl), init),
    async startSecondInstance() {
      const other = await startApp({ config, databaseUrl: db.url, logger, ...webhooks, ...accounts });
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await app.close();
      await db.drop();
    },
  };
}

export function bearer(secret: string, extra: Record<string, string> = {}): RequestInit {
  return { headers: { authorization: `Bearer ${secret}`, ...extra } };
}

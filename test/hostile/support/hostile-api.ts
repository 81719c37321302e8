import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { HostResolver, ResolvedAddress } from "../../../src/capabilities/webhooks/ssrf-policy.ts";
import type { Config } from "../../../src/config.ts";
import { operationSpec } from "../../../src/contract/routes.ts";
import { startTemporalDevServer } from "../../../src/runtime/temporal-dev-server.ts";
import { IntegrationsService } from "../../../src/gen/mail/v1/integrations_pb.js";
import { ListsService } from "../../../src/gen/mail/v1/lists_pb.js";
import { MailService } from "../../../src/gen/mail/v1/mail_pb.js";
import { WebhooksService } from "../../../src/gen/mail/v1/webhooks_pb.js";
import { ALL_SCOPES, type ApiHarness, type ApiHarnessOptions, startApiHarness } from "../../support/api-harness.ts";

/**
 * What the hostile-input suites share: one real API process per test file
 * (its own database, every listener), tenants that can do everything an API
 * key can do, and callers for the two doors a customer uses: JSON over
 * HTTP/1.1 (the REST bridge) and gRPC over h2c.
 */

/**
 * Every service an API key reaches: each service generated from
 * proto/mail/v1 with at least one RPC whose contract asks for a key scope.
 * Read from src/gen, so a new service is covered the day it is generated.
 */
export const KEY_SERVICES: readonly DescService[] = await keyServices();

async function keyServices(): Promise<DescService[]> {
  const dir = fileURLToPath(new URL("../../../src/gen/mail/v1/", import.meta.url));
  const services: DescService[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith("_pb.js")).sort()) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      const desc = value as Partial<DescService>;
      // Services that refuse API keys (refuse_api_keys: MembersService, ApiKeysService) are reached by sessions and operators only.
      const byKey = (method: DescMethod) => {
        const access = operationSpec(method).access;
        return access.kind === "key" && access.apiKeys;
      };
      if (desc.kind === "service" && desc.methods?.some(byKey)) services.push(desc as DescService);
    }
  }
  // The four the contract started with, first (they hold most of the API).
  const first = [MailService, ListsService, WebhooksService, IntegrationsService].map((s) => s.typeName);
  return services.sort((a, b) => (first.indexOf(a.typeName) + 1 || 99) - (first.indexOf(b.typeName) + 1 || 99));
}

/** A host name whose only address is public: webhook endpoints can be saved with it. */
export const PUBLIC_HOOK_HOST = "hooks.hostile.example";
export const PUBLIC_ADDRESS = "93.184.215.14";

/**
 * Names that resolve to addresses no webhook may reach (the DNS half of the
 * SSRF corpus): a public-looking name is only as good as its answers.
 */
export const RESOLVING_NAMES: Readonly<Record<string, readonly string[]>> = {
  [PUBLIC_HOOK_HOST]: [PUBLIC_ADDRESS],
  "rebind-private.hostile.example": ["10.0.0.7"],
  "rebind-loopback.hostile.example": ["127.0.0.1"],
  "rebind-metadata.hostile.example": ["169.254.169.254"],
  "rebind-mixed.hostile.example": [PUBLIC_ADDRESS, "192.168.1.20"],
  "rebind-mapped.hostile.example": ["::ffff:127.0.0.1"],
  "rebind-v6-loopback.hostile.example": ["::1"],
  "rebind-ula.hostile.example": ["fd12:3456:789a::1"],
  "rebind-linklocal.hostile.example": ["fe80::1"],
  "rebind-cgnat.hostile.example": ["100.64.1.1"],
  "rebind-unspecified.hostile.example": ["0.0.0.0"],
  "rebind-nat64.hostile.example": ["64:ff9b::a00:1"],
};

/** The resolver the service is given: the table above; other names fail like NXDOMAIN. */
export function tableResolver(table: Readonly<Record<string, readonly string[]>> = RESOLVING_NAMES): HostResolver {
  return {
    async resolve(hostname): Promise<readonly ResolvedAddress[]> {
      const answer = table[hostname.toLowerCase()];
      if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      return answer.map((address): ResolvedAddress => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
}

/**
 * A company whose keys hold every scope. Keys are used in turn: a property
 * run sends hundreds of requests, and some operations have a per-key limit
 * of their own in the contract (300 per minute for conversions).
 */
export interface Tenant {
  readonly companyId: string;
  readonly keys: readonly string[];
  /** The next key in turn. */
  secret(): string;
}

export interface HostileApi {
  readonly h: ApiHarness;
  /** JSON over HTTP/1.1 with a tenant's key; the body is sent as given (string or bytes) or as JSON. */
  rest(tenant: Tenant, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RestAnswer>;
  /** A gRPC (h2c) client of `service` with the tenant's keys, in turn. */
  grpc<S extends DescService>(service: S, tenant: Tenant): Client<S>;
  newTenant(name?: string, keyCount?: number): Promise<Tenant>;
  close(): Promise<void>;
}

export interface RestAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/**
 * The API on a Temporal dev server of its own, without a worker: accepted
 * messages and webhook deliveries get their workflows started (so the
 * outbox relays have nothing left to retry) and nothing is ever sent.
 */
export async function startHostileApi(overrides: Partial<Config> = {}, options: ApiHarnessOptions = {}): Promise<HostileApi> {
  const temporal = await startTemporalDevServer();
  let h: ApiHarness;
  try {
    h = await startApiHarness(
      {
        temporalAddress: temporal.address,
        temporalTaskQueue: `hostile-${randomBytes(4).toString("hex")}`,
        runWorker: false,
        relayIntervalMs: 200,
        // The per-key default limit is raised so that the property runs measure the
        // service's answers, not the rate limiter's.
        requestsPerMinute: 1_000_000,
        ...overrides,
      },
      { webhookDelivery: { resolver: tableResolver() }, ...options },
    );
  } catch (error) {
    await temporal.stop();
    throw error;
  }
  // The webhook relay runs beside a worker; with none, this process runs it (plain starts, never worked on).
  h.app.webhooks.dispatcher.startRelay();
  const transports = new Map<Tenant, Transport>();

  const transportOf = (tenant: Tenant): Transport => {
    let transport = transports.get(tenant);
    if (!transport) {
      const withKey: Interceptor = (next) => (req) => {
        req.header.set("authorization", `Bearer ${tenant.secret()}`);
        return next(req);
      };
      transport = createGrpcTransport({ baseUrl: h.app.grpcUrl, interceptors: [withKey] });
      transports.set(tenant, transport);
    }
    return transport;
  };

  return {
    h,
    async rest(tenant, method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${tenant.secret()}`, ...headers } };
      if (body !== undefined) {
        init.body = typeof body === "string" || body instanceof Uint8Array ? (body as string | Uint8Array<ArrayBuffer>) : JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] ??= "application/json";
      }
      const response = await h.fetch(path, init);
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    grpc: (service, tenant) => createClient(service, transportOf(tenant)),
    async newTenant(name = "Hostile Inc.", keyCount = 4) {
      const first = await h.newCompanyWithKey(ALL_SCOPES, name);
      const keys = [first.secret];
      for (let i = 1; i < keyCount; i++) keys.push((await h.newKey(first.companyId, ALL_SCOPES, `key ${i}`)).secret);
      let turn = 0;
      return { companyId: first.companyId, keys, secret: () => keys[turn++ % keys.length] as string };
    },
    async close() {
      await Promise.all([h.close(), temporal.stop()]);
    },
  };
}

import type { SignupForms } from "../../src/capabilities/forms/index.ts";
import type { ConversionRecorder } from "../../src/transport/connect/conversions/index.ts";
import type { ServiceImpl } from "@connectrpc/connect";
import { ApiError } from "../../src/contract/api-error.ts";
import type { AuthenticatedKey } from "../../src/capabilities/accounts/types.ts";
import type { IdempotencyGuard } from "../../src/capabilities/idempotency/index.ts";
import type { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import type { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import type { ListsService } from "../../src/gen/mail/v1/lists_pb.js";
import type { Contacts } from "../../src/capabilities/contacts/index.ts";
import { type ApiDependencies, type ApiServers, buildApiServers } from "../../src/transport/server.ts";
import { testConfig } from "../support/api-harness.ts";

/** The one key the stub authenticator accepts. */
export const GOOD_KEY = "tml_good0000000000000000000000000000000000000";

export const STUB_CALLER: AuthenticatedKey = {
  keyId: "00000000-0000-4000-8000-000000000001",
  keyName: "stub",
  keyPrefix: GOOD_KEY.slice(0, 12),
  scopes: ["mail.transactional.send", "mail.events.read", "mail.contacts.read", "mail.contacts.write", "mail.conversions.write"],
  expiresAt: null,
  companyId: "00000000-0000-4000-8000-000000000002",
  companyName: "Stub Inc.",
  entitlements: { api: true, smtp: false },
};

export interface StubApi {
  readonly servers: ApiServers;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** Keys the authenticator was asked about, in order. */
  readonly lookups: string[];
  close(): Promise<void>;
}

/**
 * The real listeners (both doors, every transport rule) in front of stub
 * capabilities: for transport behaviour that needs no database, such as
 * timeouts. Sends answer 202 at once; reads find nothing.
 */
export async function startStubApi(overrides: Partial<ApiDependencies> = {}): Promise<StubApi> {
  const lookups: string[] = [];
  const servers = await buildApiServers({
    config: testConfig(),
    authenticator: {
      async authenticate(key) {
        lookups.push(key);
        if (key !== GOOD_KEY) throw new ApiError("API_KEY_INVALID", "The API key is unknown or has been revoked.");
        return STUB_CALLER;
      },
    },
    rateLimiter: {
      async consume({ limitPerMinute: limit }) {
        return { allowed: true, limit, remaining: limit - 1, resetSeconds: 60, retryAfterSeconds: 0 };
      },
    },
    // Only reached with an Idempotency-Key header, which these tests never send.
    idempotency: {} as unknown as IdempotencyGuard,
    adminService: {} as ServiceImpl<typeof AdminService>,
    webhooksService: {} as ServiceImpl<typeof WebhooksService>,
    listsService: {} as ServiceImpl<typeof ListsService>,
    mail: {
      contacts: {} as Contacts,
      forms: {} as SignupForms,
      conversions: {} as ConversionRecorder,
      credits: {
        async balance() {
          return 0;
        },
      },
      acceptance: {
        async send() {
          return { id: "00000000-0000-4000-8000-000000000003", status: "queued", replayed: false };
        },
      },
      messages: {
        async get() {
          throw new ApiError("NOT_FOUND", "message not found");
        },
        async list() {
          return { items: [], nextCursor: null };
        },
      },
    },
    logger: false,
    ...overrides,
  });
  const { httpUrl, grpcUrl } = await servers.listen();
  return { servers, httpUrl, grpcUrl, lookups, close: () => servers.close() };
}

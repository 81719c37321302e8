import { randomBytes } from "node:crypto";
import type { Config } from "../../src/config.ts";
import type { TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { type ApiHarness, type ApiHarnessOptions, bearer, startApiHarness } from "./api-harness.ts";
import { startTemporalDevServer as startTestTemporal } from "../../src/runtime/temporal-dev-server.ts";

/**
 * A real API process with its Temporal worker, on a Temporal dev server of
 * its own, sending through the built-in simulator unless told otherwise.
 */
export interface SendingHarness extends ApiHarness {
  readonly temporal: TemporalDevServer;
  /** A company that can send: key, verified domain, default sender, credits. */
  readySender(options?: { credits?: number; scopes?: string[] }): Promise<ReadySender>;
  send(secret: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Polls GET /mail/v1/messages/{id} until `done` holds (or fails after `timeoutMs`). */
  waitForMessage(secret: string, id: string, done: (message: MessageJson) => boolean, timeoutMs?: number): Promise<MessageJson>;
}

export interface ReadySender {
  readonly companyId: string;
  readonly keyId: string;
  readonly secret: string;
  readonly senderId: string;
  readonly fromEmail: string;
}

export interface MessageJson {
  id: string;
  recipient: string;
  subject: string;
  templateId: string | null;
  status: string;
  providerMessageId: string | null;
  errorCode: string | null;
  createdAt: string;
  sentAt: string | null;
  lastEventAt: string | null;
  events: Array<{ type: string; at: string }>;
  tags: Record<string, string>;
}

export async function startSendingHarness(
  overrides: Partial<Config> = {},
  temporal?: TemporalDevServer,
  options: ApiHarnessOptions = {},
): Promise<SendingHarness> {
  const server = temporal ?? (await startTestTemporal());
  const api = await startApiHarness({
    temporalAddress: server.address,
    temporalTaskQueue: `mail-test-${randomBytes(4).toString("hex")}`,
    runWorker: true,
    relayIntervalMs: 300,
    sendingRatePerSecond: 1000,
    sendingBurst: 1000,
    handoffTimeoutSeconds: 10,
    ...overrides,
  }, options);

  const harness: SendingHarness = {
    ...api,
    temporal: server,
    async readySender(options = {}) {
      const { companyId, keyId, secret } = await api.newCompanyWithKey(
        options.scopes ?? ["mail.transactional.send", "mail.events.read"],
        `Shop ${randomBytes(3).toString("hex")}`,
      );
      const domainName = `shop-${randomBytes(4).toString("hex")}.example`;
      const { domain } = await api.admin.createSendingDomain({ companyId, domain: domainName });
      await api.admin.verifySendingDomain({ companyId, domainId: domain?.id ?? "", override: true });
      const fromEmail = `receipts@${domainName}`;
      const { sender } = await api.admin.createSender({ companyId, email: fromEmail, name: "Shop Receipts", makeDefault: true });
      if (options.credits !== 0) {
        await api.admin.adjustCredits({ companyId, amount: BigInt(options.credits ?? 100), note: "test credits" });
      }
      return { companyId, keyId, secret, senderId: sender?.id ?? "", fromEmail };
    },
    send(secret, body, headers = {}) {
      return api.fetch("/mail/v1/send", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    },
    async waitForMessage(secret, id, done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: MessageJson | undefined;
      while (Date.now() < deadline) {
        const response = await api.fetch(`/mail/v1/messages/${id}`, bearer(secret));
        if (response.status === 200) {
          last = (await response.json()) as MessageJson;
          if (done(last)) return last;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`message ${id} did not reach the expected state; last seen: ${JSON.stringify(last)}`);
    },
    async close() {
      await api.close();
      if (!temporal) await server.stop();
    },
  };
  return harness;
}

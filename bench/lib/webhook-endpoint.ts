/**
 * The benchmark's webhook endpoint, created by the runner through the
 * webhooks capability itself (validation, SSRF check, sealed secret), with
 * the one difference that its target policy lets the receiver's host name
 * resolve to 127.0.0.1: the API process would refuse a loopback URL, and
 * rightly so.
 */
import { openOrm } from "../../src/adapters/postgres/orm.ts";
import { postgresWebhookStores } from "../../src/adapters/postgres/webhooks/index.ts";
import { createSecretSealer } from "../../src/capabilities/sending-setup/key-sealing.ts";
import { WebhookEndpoints, WebhookTargetPolicy } from "../../src/capabilities/webhooks/index.ts";
import { DATA_ENCRYPTION_KEY } from "./service.ts";

export async function createBenchEndpoint(
  databaseUrl: string,
  companyId: string,
  receiver: { readonly host: string; readonly url: string },
  events: readonly string[],
): Promise<{ readonly secret: string }> {
  const orm = await openOrm(databaseUrl, { poolMax: 1 });
  try {
    const endpoints = new WebhookEndpoints({
      store: postgresWebhookStores(orm).endpointStore,
      sealer: createSecretSealer(DATA_ENCRYPTION_KEY),
      policy: new WebhookTargetPolicy({
        resolver: {
          resolve: async (hostname) => {
            if (hostname !== receiver.host) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
            return [{ address: "127.0.0.1", family: 4 }];
          },
        },
        allowLoopback: true,
      }),
    });
    const { secret } = await endpoints.create({ companyId, url: receiver.url, events });
    return { secret };
  } finally {
    await orm.close();
  }
}

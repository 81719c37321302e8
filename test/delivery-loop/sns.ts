import { createSign, randomUUID } from "node:crypto";
import { Agent, createServer, type AgentOptions } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { generate } from "selfsigned";

/**
 * A stand-in for Amazon SNS in tests: a signing certificate made with
 * selfsigned, served over local HTTPS under the SNS host name
 * (sns.<region>.amazonaws.com), and messages signed with it the way SNS
 * signs them (SignatureVersion 2, SHA256withRSA over the canonical fields).
 * `agent` is the test override the service fetches certificates through: it
 * connects every request to the local server.
 */
export interface FakeSns {
  readonly region: string;
  readonly topicArn: string;
  readonly certUrl: string;
  readonly agent: Agent;
  /** Subscription URLs that were fetched (confirmations). */
  readonly confirmed: string[];
  /** Every path asked of the SNS host, certificates included. */
  readonly requested: string[];
  notification(message: unknown, options?: { certUrl?: string; tamper?: boolean }): Record<string, string>;
  subscriptionConfirmation(): Record<string, string>;
  close(): Promise<void>;
}

function sign(fields: Record<string, string>, keys: readonly string[], privateKey: string): string {
  const signer = createSign("RSA-SHA256");
  for (const key of keys) if (key in fields) signer.update(`${key}\n${fields[key]}\n`);
  return signer.sign(privateKey, "base64");
}

export async function startFakeSns(region = "us-east-1"): Promise<FakeSns> {
  const host = `sns.${region}.amazonaws.com`;
  // The key SNS signs with, and its certificate (what SigningCertURL serves).
  const signing = await generate([{ name: "commonName", value: host }], { keySize: 2048, algorithm: "sha256" });
  // The HTTPS server's own certificate for the SNS host name.
  const tls = await generate([{ name: "commonName", value: host }], {
    keySize: 2048,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: host }] }],
  });
  const certPath = `/SimpleNotificationService-${randomUUID().replaceAll("-", "")}.pem`;
  const confirmed: string[] = [];
  const requested: string[] = [];
  const server = createServer({ key: tls.private, cert: tls.cert }, (request, response) => {
    requested.push(request.url ?? "");
    if (request.url === certPath) return response.writeHead(200, { "content-type": "application/x-pem-file" }).end(signing.cert);
    if (request.url?.startsWith("/?Action=ConfirmSubscription")) {
      confirmed.push(request.url);
      return response.writeHead(200, { "content-type": "text/xml" }).end("<ConfirmSubscriptionResponse/>");
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  class LocalAgent extends Agent {
    override createConnection(options: AgentOptions & { host?: string; port?: number }, callback?: (error: Error | null, socket: Duplex) => void): Duplex {
      const create = Agent.prototype.createConnection as (this: Agent, o: unknown, cb?: unknown) => Socket;
      return create.call(this, { ...options, host: "127.0.0.1", port, servername: host }, callback);
    }
  }
  const agent = new LocalAgent({ ca: tls.cert, keepAlive: false });
  const topicArn = `arn:aws:sns:${region}:123456789012:ses-events`;
  const certUrl = `https://${host}${certPath}`;

  return {
    region,
    topicArn,
    certUrl,
    agent,
    confirmed,
    requested,
    notification(message, options = {}) {
      const fields: Record<string, string> = {
        Type: "Notification",
        MessageId: randomUUID(),
        TopicArn: topicArn,
        Message: JSON.stringify(message),
        Timestamp: new Date().toISOString(),
        SignatureVersion: "2",
        SigningCertURL: options.certUrl ?? certUrl,
      };
      fields.Signature = sign(fields, ["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"], signing.private);
      if (options.tamper) fields.Message = fields.Message?.replace("Permanent", "Transient").replace("Delivery", "Bounce") ?? "";
      return fields;
    },
    subscriptionConfirmation() {
      const token = randomUUID().replaceAll("-", "");
      const fields: Record<string, string> = {
        Type: "SubscriptionConfirmation",
        MessageId: randomUUID(),
        Token: token,
        TopicArn: topicArn,
        Message: `You have chosen to subscribe to the topic ${topicArn}.`,
        SubscribeURL: `https://${host}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
        Timestamp: new Date().toISOString(),
        SignatureVersion: "2",
        SigningCertURL: certUrl,
      };
      fields.Signature = sign(fields, ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"], signing.private);
      return fields;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

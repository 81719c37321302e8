import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import type { Config } from "../../src/config.ts";

export const VERP_SECRET = "test-verp-secret-0123456789abcdef";

/**
 * A return path of the older form, whose MAC covers the message id alone
 * and not the domain: what mail still in flight carries.
 */
export function idOnlyReturnPath(messageId: string, domain: string, key = VERP_SECRET): string {
  const hex = messageId.toLowerCase().replaceAll("-", "");
  return `b-${hex}${createHmac("sha256", key).update(`mail.v1.verp:${hex}`).digest("hex").slice(0, 16)}@${domain}`;
}

/** The delivery loop's settings for a test: VERP on, the inbound listener on `inboundPort` (0: any free port). */
export function deliveryReportsConfig(inboundPort: number, overrides: Partial<NonNullable<Config["deliveryReports"]>["inboundSmtp"]> = {}): NonNullable<Config["deliveryReports"]> {
  return {
    verpSecret: VERP_SECRET,
    inboundSmtp: {
      enabled: true,
      host: "127.0.0.1",
      port: inboundPort,
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      maxMessageBytes: 256 * 1024,
      maxConnections: 20,
      messagesPerMinute: 1000,
      ...overrides,
    },
    ses: { region: "us-east-1", configurationSet: undefined, endpoint: undefined, snsTopicArn: undefined },
  };
}

export interface RecipientMx {
  readonly port: number;
  /** Messages it took: the RCPT TO address and the raw message. */
  readonly delivered: { rcptTo: string; mailFrom: string; raw: string }[];
  close(): Promise<void>;
}

/**
 * The recipients' mail server: an smtp-server that takes `ok…@` recipients
 * and refuses every other one with 550 5.1.1. It does not offer DSN, like
 * many real servers: the relay then reports success itself ("relayed").
 */
export async function startRecipientMx(): Promise<RecipientMx> {
  const delivered: RecipientMx["delivered"] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    hideDSN: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!address.address.startsWith("ok")) return callback(Object.assign(new Error("5.1.1 No such user here"), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        for (const rcpt of session.envelope.rcptTo) delivered.push({ rcptTo: rcpt.address, mailFrom, raw: Buffer.concat(chunks).toString("utf8") });
        callback(null, "2.0.0 Ok: delivered");
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    delivered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

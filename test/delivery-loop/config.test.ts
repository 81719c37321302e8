import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { productionProblems } from "../../src/config/production-rules.ts";

describe("the delivery loop's configuration", () => {
  it("reads the inbound listener and SES settings, and derives the VERP key from the cursor secret unless set", () => {
    const config = loadConfig({
      EMAIL_PROVIDER: "ses",
      INBOUND_SMTP_ENABLED: "true",
      INBOUND_SMTP_PORT: "2526",
      INBOUND_SMTP_MAX_BYTES: "4096",
      SES_REGION: "eu-west-1",
      SES_CONFIGURATION_SET: "mail-events",
      SES_SNS_TOPIC_ARN: "arn:aws:sns:eu-west-1:123456789012:ses-events",
    });
    expect(config.emailProvider).toBe("ses");
    expect(config.deliveryReports?.inboundSmtp).toMatchObject({ enabled: true, port: 2526, maxMessageBytes: 4096 });
    expect(config.deliveryReports?.ses).toMatchObject({ region: "eu-west-1", configurationSet: "mail-events" });
    const derived = config.deliveryReports?.verpSecret;
    expect(derived).toMatch(/^[0-9a-f]{64}$/);
    expect(loadConfig({ CURSOR_SECRET: "another-cursor-secret-0123456789abcdef" }).deliveryReports?.verpSecret).not.toBe(derived);
    expect(loadConfig({ VERP_SECRET: "my-own-verp-secret-0123456789" }).deliveryReports?.verpSecret).toBe("my-own-verp-secret-0123456789");
  });

  it("production refuses an inbound listener without STARTTLS", () => {
    const problem = /^INBOUND_SMTP_ENABLED=true without INBOUND_SMTP_TLS_CERT_FILE/;
    expect(productionProblems({ INBOUND_SMTP_ENABLED: "true" }).some((p) => problem.test(p))).toBe(true);
    expect(
      productionProblems({ INBOUND_SMTP_ENABLED: "true", INBOUND_SMTP_TLS_CERT_FILE: "/tls/mx.pem", INBOUND_SMTP_TLS_KEY_FILE: "/tls/mx.key" }).some((p) => problem.test(p)),
    ).toBe(false);
    expect(productionProblems({}).some((p) => problem.test(p))).toBe(false);
  });
});

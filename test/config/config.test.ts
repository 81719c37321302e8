import { describe, expect, it } from "vitest";
import { type Config, ConfigError, loadConfig, startupWarnings } from "../../src/config.ts";

/** What loadConfig throws for `env`, or a failure if it accepts it. */
function refusal(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("loadConfig accepted the environment");
}

const secret = (seed: string): string => `${seed}-${"k".repeat(40)}`.slice(0, 48);

/** A production environment that passes every rule. */
const PRODUCTION: NodeJS.ProcessEnv = {
  NODE_ENV: "production",
  DATABASE_URL: "postgres://mail:s3cret@db.internal:5432/mail",
  TEMPORAL_ADDRESS: "temporal.internal:7233",
  API_KEY_PEPPER: secret("pepper"),
  DATA_ENCRYPTION_KEY: secret("sealing"),
  OPERATOR_TOKEN: secret("operator"),
  CURSOR_SECRET: secret("cursor"),
  FORM_TOKEN_SECRET: secret("form"),
  CONFIRMATION_SECRET: secret("confirmation"),
  VERP_SECRET: secret("verp"),
  EMAIL_PROVIDER: "smtp",
  SMTP_HOST: "relay.internal",
  PUBLIC_BASE_URL: "https://mail.example.com",
};

describe("development mode (npm start)", () => {
  it("keeps every default a developer machine relies on", () => {
    const expected: Config = {
      mode: "development",
      databaseUrl: undefined,
      temporalAddress: undefined,
      temporalNamespace: "default",
      temporalTaskQueue: "mail",
      temporalTls: undefined,
      temporalApiKey: undefined,
      temporalMetricsAddress: undefined,
      host: "127.0.0.1",
      httpPort: 8080,
      grpcPort: 8081,
      operatorHost: "127.0.0.1",
      operatorPort: 8082,
      operatorTls: undefined,
      workerOperatorHost: "127.0.0.1",
      workerOperatorPort: 8083,
      trustProxy: false,
      shutdownTimeoutMs: 25_000,
      operatorToken: undefined,
      apiKeyPepper: "dev-only-pepper-change-me",
      apiKeyPrefix: "tml",
      requestsPerMinute: 600,
      idempotencyWindowHours: 24,
      idempotencyLeaseSeconds: 40,
      keyRotationGraceHours: 24,
      maxBodyBytes: 2 * 1024 * 1024,
      messageContentRetentionDays: 30,
      keyUsageFlushMs: 5000,
      logLevel: "info",
      dataEncryptionKey: "dev-only-data-encryption-key-change-me",
      dataEncryptionKeys: [],
      spfInclude: "spf.mail.local",
      returnPathMxHost: "feedback.mail.local",
      dnsServers: [],
      allowVerificationOverride: true,
      allowSimulatorInProduction: false,
      emailProvider: "simulator",
      smtp: { host: "127.0.0.1", port: 25, secure: false, requireTls: false, user: undefined, password: undefined },
      messageIdDomain: "mail.localhost",
      deliveryReports: {
        verpSecret: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
        inboundSmtp: {
          enabled: false,
          host: "0.0.0.0",
          port: 2525,
          tlsCertFile: undefined,
          tlsKeyFile: undefined,
          maxMessageBytes: 1024 * 1024,
          maxConnections: 50,
          messagesPerMinute: 120,
        },
        ses: { region: "us-east-1", configurationSet: undefined, endpoint: undefined, snsTopicArn: undefined },
      },
      sendingRatePerSecond: 50,
      sendingBurst: 50,
      handoffTimeoutSeconds: 60,
      cursorSecret: "dev-only-cursor-secret-change-me",
      formTokenSecret: "dev-only-form-token-secret-change-me",
      confirmationSecret: "dev-only-confirmation-secret-change-me",
      runWorker: true,
      relayIntervalMs: 2000,
      webhookEndpointsPerCompany: 20,
      webhookEndpointsPerHost: 3,
      webhookDnsTimeoutMs: 3000,
      apiPoolMax: 10,
      publicBaseUrl: undefined,
      systemSenderCompanyId: undefined,
      lowCreditsThreshold: 100,
      sendingGuard: { bouncePercent: 5, complaintPercent: 0.3, minSends: 200 },
      domainChecks: { pendingIntervalSeconds: 300, pendingHours: 72, verifiedIntervalSeconds: 86_400 },
      signupLimits: { perClientPerMinute: 10, perFormPerMinute: 60, perCompanyPerMinute: 120 },
      confirmationsPerCompanyPerHour: 100,
      workerPoolMax: 10,
      databaseAcquireTimeoutMs: 5000,
      databaseStatementTimeoutMs: 30000,
      simulatorHandoffDelayMs: 0,
      dataDir: ".data",
      temporalUiUrl: undefined,
    };
    expect(loadConfig({})).toEqual(expected);
  });

  it("treats an empty value as unset", () => {
    const config = loadConfig({ API_KEY_PEPPER: "", DATA_ENCRYPTION_KEY: "", HTTP_PORT: "", TEMPORAL_NAMESPACE: "", SMTP_USER: "" });
    expect(config.apiKeyPepper).toBe("dev-only-pepper-change-me");
    expect(config.dataEncryptionKey).toBe("dev-only-data-encryption-key-change-me");
    expect(config.httpPort).toBe(8080);
    expect(config.temporalNamespace).toBe("default");
    expect(config.smtp.user).toBeUndefined();
  });

  it("accepts short secrets, SMTP credentials without TLS and no external servers (a developer's choice)", () => {
    const config = loadConfig({ NODE_ENV: "test", API_KEY_PEPPER: "p", SMTP_USER: "u", SMTP_PASSWORD: "p", OPERATOR_TOKEN: "t" });
    expect(config.mode).toBe("development");
    expect(config.apiKeyPepper).toBe("p");
    // Never the pepper: rotating it must not expire cursors, pages or links.
    expect(config.cursorSecret).toBe("dev-only-cursor-secret-change-me");
    expect(config.smtp).toMatchObject({ user: "u", password: "p", secure: false, requireTls: false });
  });

  it("reads every setting", () => {
    const config = loadConfig({
      DATABASE_URL: "postgresql://localhost/mail",
      TEMPORAL_ADDRESS: "[::1]:7233",
      HTTP_PORT: "0",
      DNS_SERVERS: " 10.0.0.2, 10.0.0.3:5353 ,",
      ALLOW_VERIFICATION_OVERRIDE: "false",
      EMAIL_PROVIDER: "smtp",
      SMTP_PORT: "587",
      SMTP_REQUIRE_TLS: "true",
      SENDING_RATE_PER_SECOND: "2.5",
      CURSOR_SECRET: "cursor",
      RUN_WORKER: "false",
      LOG_LEVEL: "debug",
      MAIL_DATA_DIR: "/var/lib/mail",
      TEMPORAL_UI_URL: "http://ui:8233",
    });
    expect(config).toMatchObject({
      databaseUrl: "postgresql://localhost/mail",
      temporalAddress: "[::1]:7233",
      httpPort: 0,
      dnsServers: ["10.0.0.2", "10.0.0.3:5353"],
      allowVerificationOverride: false,
      emailProvider: "smtp",
      smtp: { port: 587, requireTls: true },
      sendingRatePerSecond: 2.5,
      cursorSecret: "cursor",
      runWorker: false,
      logLevel: "debug",
      dataDir: "/var/lib/mail",
      temporalUiUrl: "http://ui:8233",
    });
  });
});

describe("bad values", () => {
  it.each([
    ["HTTP_PORT", "http", 'HTTP_PORT must be a port number from 0 to 65535, got "http"'],
    ["GRPC_PORT", "70000", 'GRPC_PORT must be a port number from 0 to 65535, got "70000"'],
    ["SMTP_PORT", "0", 'SMTP_PORT must be a port number from 1 to 65535, got "0"'],
    ["RUN_WORKER", "yes", 'RUN_WORKER must be true or false, got "yes"'],
    ["SMTP_SECURE", "TRUE", 'SMTP_SECURE must be true or false, got "TRUE"'],
    ["RATE_LIMIT_PER_MINUTE", "-5", 'RATE_LIMIT_PER_MINUTE must be a whole number 1 or more, got "-5"'],
    ["KEY_USAGE_FLUSH_MS", "1.5", 'KEY_USAGE_FLUSH_MS must be a whole number 0 or more, got "1.5"'],
    ["SENDING_BURST", "0", 'SENDING_BURST must be a whole number 1 or more, got "0"'],
    ["SENDING_RATE_PER_SECOND", "0", 'SENDING_RATE_PER_SECOND must be a number greater than 0, got "0"'],
    ["IDEMPOTENCY_LEASE_SECONDS", "soon", 'IDEMPOTENCY_LEASE_SECONDS must be a number greater than 0, got "soon"'],
    ["EMAIL_PROVIDER", "sendgrid", 'EMAIL_PROVIDER must be one of simulator, smtp, ses, got "sendgrid"'],
    ["LOG_LEVEL", "verbose", 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'],
    ["MAIL_MODE", "prod", 'MAIL_MODE must be one of development, production, got "prod"'],
    ["API_KEY_PREFIX", "TML", 'API_KEY_PREFIX must be three lower-case letters, got "TML"'],
    ["TEMPORAL_ADDRESS", "temporal", 'TEMPORAL_ADDRESS must be host:port (e.g. temporal:7233), got "temporal"'],
    ["TEMPORAL_METRICS_ADDRESS", "9464", 'TEMPORAL_METRICS_ADDRESS must be host:port (e.g. 127.0.0.1:9464), got "9464"'],
    ["WORKER_OPERATOR_PORT", "-1", 'WORKER_OPERATOR_PORT must be a port number from 0 to 65535, got "-1"'],
    ["SHUTDOWN_TIMEOUT_MS", "0", 'SHUTDOWN_TIMEOUT_MS must be a whole number 1 or more, got "0"'],
    ["TEMPORAL_TLS", "yes", 'TEMPORAL_TLS must be true or false, got "yes"'],
    [
      "TRUST_PROXY",
      "10.0.0.0/33",
      'TRUST_PROXY must be false, true, a hop count, or a comma-separated list of proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal; got "10.0.0.0/33"',
    ],
  ])("%s=%s is refused, naming the variable", (name, value, line) => {
    expect(refusal({ [name]: value }).problems).toEqual([line]);
  });

  it("names a bad DATABASE_URL without printing it (it may hold a password)", () => {
    const error = refusal({ DATABASE_URL: "mysql://mail:hunter2@db/mail" });
    expect(error.problems).toEqual([
      "DATABASE_URL must be a postgres:// or postgresql:// URL (value not shown: it may hold a password)",
    ]);
    expect(error.message).not.toContain("hunter2");
  });

  it("reads DATA_ENCRYPTION_KEYS as id:secret entries, the sealing key first, and refuses a bad list without printing it", () => {
    expect(loadConfig({ DATA_ENCRYPTION_KEYS: " k2:c2Vjb25k , k1:Zmlyc3Q=" }).dataEncryptionKeys).toEqual([
      { id: "k2", secret: "c2Vjb25k" },
      { id: "k1", secret: "Zmlyc3Q=" },
    ]);
    const error = refusal({ DATA_ENCRYPTION_KEYS: "k2:hunter2hunter2,k2:other-secret,bad id:x,nocolon" });
    expect(error.problems).toEqual([
      "DATA_ENCRYPTION_KEYS must be a comma-separated list of id:secret, ids of 1 to 32 letters, digits, - or _, the sealing key first " +
        "(key id k2 is used twice; entry 3 is not id:secret; entry 4 is not id:secret; values not shown)",
    ]);
    expect(error.message).not.toMatch(/hunter2|other-secret|nocolon/);
  });

  it("lists every bad value at once, one line each", () => {
    const error = refusal({ HTTP_PORT: "x", RUN_WORKER: "1", LOG_LEVEL: "loud" });
    expect(error.problems.map((line) => line.split(" ")[0])).toEqual(["HTTP_PORT", "LOG_LEVEL", "RUN_WORKER"]);
    expect(error.message.split("\n")).toHaveLength(4);
    expect(error.message).toMatch(/^refusing to start: the configuration \(development mode\) has 3 problems:\n {2}- HTTP_PORT/);
  });
});

describe("proxies in front of the public listeners (TRUST_PROXY)", () => {
  it("trusts none by default; true, a hop count, or addresses and ranges when set", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "false" }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "0" }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 192.168.1.7,fd00::/8 , loopback" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "192.168.1.7",
      "fd00::/8",
      "loopback",
    ]);
  });

  it("refuses a host name, which cannot be matched against a peer's address", () => {
    expect(refusal({ TRUST_PROXY: "10.0.0.1,lb.internal" }).problems[0]).toMatch(/^TRUST_PROXY must be false, true, a hop count/);
  });
});

describe("Temporal with TLS or Temporal Cloud", () => {
  const files = { TEMPORAL_TLS_CLIENT_CERT_PATH: "/run/secrets/client.pem", TEMPORAL_TLS_CLIENT_KEY_PATH: "/run/secrets/client.key" };

  it("connects in plaintext unless TLS is asked for or implied", () => {
    expect(loadConfig({}).temporalTls).toBeUndefined();
    expect(loadConfig({ TEMPORAL_TLS: "true" }).temporalTls).toEqual({
      clientCertPath: undefined,
      clientKeyPath: undefined,
      serverCaCertPath: undefined,
      serverName: undefined,
    });
  });

  it("reads an mTLS client certificate, a server CA and name; TLS is implied", () => {
    const config = loadConfig({ ...files, TEMPORAL_TLS_SERVER_CA_CERT_PATH: "/run/secrets/ca.pem", TEMPORAL_TLS_SERVER_NAME: "temporal.internal" });
    expect(config.temporalTls).toEqual({
      clientCertPath: "/run/secrets/client.pem",
      clientKeyPath: "/run/secrets/client.key",
      serverCaCertPath: "/run/secrets/ca.pem",
      serverName: "temporal.internal",
    });
  });

  it("reads a Temporal Cloud API key, which implies TLS", () => {
    const config = loadConfig({ TEMPORAL_API_KEY: "cloud-api-key-value" });
    expect(config.temporalApiKey).toBe("cloud-api-key-value");
    expect(config.temporalTls).toBeDefined();
  });

  it("refuses half a client certificate pair", () => {
    expect(refusal({ TEMPORAL_TLS_CLIENT_CERT_PATH: "/c.pem" }).problems).toEqual([
      "TEMPORAL_TLS_CLIENT_CERT_PATH is set without TEMPORAL_TLS_CLIENT_KEY_PATH: mTLS needs the client certificate and its key",
    ]);
    expect(refusal({ TEMPORAL_TLS_CLIENT_KEY_PATH: "/c.key" }).problems).toEqual([
      "TEMPORAL_TLS_CLIENT_KEY_PATH is set without TEMPORAL_TLS_CLIENT_CERT_PATH: mTLS needs the client certificate and its key",
    ]);
  });

  it("refuses TEMPORAL_TLS=false with TLS settings or an API key, without printing the key", () => {
    const error = refusal({ TEMPORAL_TLS: "false", TEMPORAL_API_KEY: "cloud-api-key-value", ...files });
    expect(error.problems).toEqual([
      "TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_API_KEY: " +
        "TLS settings need TLS, and an API key must not cross the network in clear text (unset TEMPORAL_TLS)",
    ]);
    expect(error.message).not.toContain("cloud-api-key-value");
  });
});

describe("production mode", () => {
  it("starts with external servers and strong secrets, the verification override off", () => {
    const config = loadConfig(PRODUCTION);
    expect(config.mode).toBe("production");
    expect(config.allowVerificationOverride).toBe(false);
    expect(config.apiKeyPepper).toBe(PRODUCTION.API_KEY_PEPPER);
    expect(config.dataEncryptionKey).toBe(PRODUCTION.DATA_ENCRYPTION_KEY);
    expect(config.operatorToken).toBe(PRODUCTION.OPERATOR_TOKEN);
  });

  it("is chosen by NODE_ENV=production or MAIL_MODE=production", () => {
    const { NODE_ENV: _, ...rest } = PRODUCTION;
    expect(loadConfig({ ...rest, MAIL_MODE: "production" }).mode).toBe("production");
    expect(loadConfig({ ...PRODUCTION, MAIL_MODE: "development" }).mode).toBe("production");
    expect(refusal({ MAIL_MODE: "production" }).mode).toBe("production");
    expect(loadConfig(rest).mode).toBe("development");
  });

  it.each(["API_KEY_PEPPER", "OPERATOR_TOKEN", "CURSOR_SECRET", "FORM_TOKEN_SECRET", "CONFIRMATION_SECRET"])("refuses %s unset, empty, short or published", (name) => {
    expect(refusal({ ...PRODUCTION, [name]: undefined }).problems).toEqual([
      `${name} is not set: production needs a random secret of at least 32 characters (e.g. \`openssl rand -base64 48\`)`,
    ]);
    expect(refusal({ ...PRODUCTION, [name]: "" }).problems).toEqual([
      `${name} is not set: production needs a random secret of at least 32 characters (e.g. \`openssl rand -base64 48\`)`,
    ]);
    const short = "x7Kp2mQ9vB4nR8sT1wY6zA3cE5gH0jL"; // 31 characters
    const shortError = refusal({ ...PRODUCTION, [name]: short });
    expect(shortError.problems).toEqual([
      `${name} is 31 characters long: production needs at least 32 random characters (e.g. \`openssl rand -base64 48\`)`,
    ]);
    expect(shortError.message).not.toContain(short);
    for (const published of ["dev-only-pepper-change-me", "dev-only-data-encryption-key-change-me", "change-me-operator-token"]) {
      expect(refusal({ ...PRODUCTION, [name]: published }).problems).toEqual([
        `${name} is a development or placeholder value published in this repository: set a random secret (e.g. \`openssl rand -base64 48\`)`,
      ]);
    }
    // Long enough, but a placeholder nobody replaced.
    expect(refusal({ ...PRODUCTION, [name]: "please-change-me-before-going-live-0123456789" }).problems).toHaveLength(1);
  });

  it("refuses DATA_ENCRYPTION_KEY unset unless keys with ids are set, and checks each of those", () => {
    const unset = "is not set: production needs a random secret of at least 32 characters (e.g. `openssl rand -base64 48`)";
    expect(refusal({ ...PRODUCTION, DATA_ENCRYPTION_KEY: undefined }).problems).toEqual([
      `DATA_ENCRYPTION_KEY ${unset} (or DATA_ENCRYPTION_KEYS, keys with ids)`,
    ]);
    expect(refusal({ ...PRODUCTION, DATA_ENCRYPTION_KEY: "change-me-data-encryption-key" }).problems[0]).toMatch(/^DATA_ENCRYPTION_KEY is a development/);
    const keyed = loadConfig({ ...PRODUCTION, DATA_ENCRYPTION_KEY: undefined, DATA_ENCRYPTION_KEYS: `k2:${secret("k2")},k1:${secret("k1")}` });
    expect(keyed.dataEncryptionKey).toBeUndefined();
    expect(keyed.dataEncryptionKeys).toEqual([
      { id: "k2", secret: secret("k2") },
      { id: "k1", secret: secret("k1") },
    ]);
    const weak = refusal({ ...PRODUCTION, DATA_ENCRYPTION_KEYS: `k2:tooshort,k1:${secret("k1")}` });
    expect(weak.problems).toEqual([
      "DATA_ENCRYPTION_KEYS (key k2) is 8 characters long: production needs at least 32 random characters (e.g. `openssl rand -base64 48`)",
    ]);
    expect(weak.message).not.toContain("tooshort");
  });

  it("gives cursors, form tokens and confirmation links their own secrets, none of them the pepper", () => {
    const config = loadConfig(PRODUCTION);
    expect(config.cursorSecret).toBe(PRODUCTION.CURSOR_SECRET);
    expect(config.formTokenSecret).toBe(PRODUCTION.FORM_TOKEN_SECRET);
    expect(config.confirmationSecret).toBe(PRODUCTION.CONFIRMATION_SECRET);
    expect(refusal({ ...PRODUCTION, CURSOR_SECRET: PRODUCTION.API_KEY_PEPPER }).problems).toEqual([
      "API_KEY_PEPPER and CURSOR_SECRET have the same value: use a different secret for each",
    ]);
    expect(refusal({ ...PRODUCTION, CONFIRMATION_SECRET: PRODUCTION.FORM_TOKEN_SECRET }).problems).toEqual([
      "FORM_TOKEN_SECRET and CONFIRMATION_SECRET have the same value: use a different secret for each",
    ]);
  });

  it("refuses the simulator, and an email service left unnamed (issue 21: smtp or ses)", () => {
    expect(refusal({ ...PRODUCTION, EMAIL_PROVIDER: undefined }).problems).toEqual([
      "EMAIL_PROVIDER is not set: production must name the email service (smtp or ses); the development default, the simulator, delivers nothing",
    ]);
    expect(refusal({ ...PRODUCTION, EMAIL_PROVIDER: "simulator" }).problems).toEqual([
      "EMAIL_PROVIDER=simulator delivers nothing: production needs smtp or ses " +
        "(for a trial deployment that must not send, set ALLOW_SIMULATOR_IN_PRODUCTION=true: every start then logs a warning)",
    ]);
    expect(refusal({ ...PRODUCTION, EMAIL_PROVIDER: "simulator", ALLOW_SIMULATOR_IN_PRODUCTION: "false" }).problems).toHaveLength(1);
  });

  it("starts the simulator in production only when allowed, with a warning at every start", () => {
    const allowed = loadConfig({ ...PRODUCTION, EMAIL_PROVIDER: "simulator", ALLOW_SIMULATOR_IN_PRODUCTION: "true" });
    expect(allowed.emailProvider).toBe("simulator");
    expect(allowed.allowSimulatorInProduction).toBe(true);
    expect(startupWarnings(allowed)).toEqual([
      "EMAIL_PROVIDER=simulator in production (ALLOW_SIMULATOR_IN_PRODUCTION=true): messages are accepted and charged but never leave this service",
    ]);
    expect(startupWarnings(loadConfig(PRODUCTION))).toEqual([]);
    // Development keeps its default: the simulator, silently.
    expect(startupWarnings(loadConfig({}))).toEqual([]);
  });

  it("refuses PUBLIC_BASE_URL unset or not https", () => {
    expect(refusal({ ...PRODUCTION, PUBLIC_BASE_URL: "" }).problems).toEqual([
      "PUBLIC_BASE_URL is not set: production needs the API's public https:// address (the hosted sign-up forms and confirmation links carry it)",
    ]);
    for (const bad of ["http://mail.example.com", "mail.example.com", "ftp://mail.example.com"]) {
      expect(refusal({ ...PRODUCTION, PUBLIC_BASE_URL: bad }).problems).toEqual([
        `PUBLIC_BASE_URL must be an https:// URL in production (the hosted sign-up forms and confirmation links carry it), got "${bad}"`,
      ]);
    }
    expect(loadConfig({ ...PRODUCTION, PUBLIC_BASE_URL: "https://mail.example.com/" }).publicBaseUrl).toBe("https://mail.example.com");
  });

  it("refuses an operator listener off loopback without TLS", () => {
    for (const loopback of ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]) {
      expect(loadConfig({ ...PRODUCTION, OPERATOR_HOST: loopback }).operatorHost).toBe(loopback);
    }
    for (const open of ["0.0.0.0", "::", "10.0.0.5", "admin.internal"]) {
      expect(refusal({ ...PRODUCTION, OPERATOR_HOST: open }).problems).toEqual([
        `OPERATOR_HOST=${open} is not a loopback address and the operator listener (AdminService with its bearer token, /metrics) ` +
          "has no TLS: set OPERATOR_TLS_CERT_PATH and OPERATOR_TLS_KEY_PATH, or keep it on 127.0.0.1 or ::1",
      ]);
    }
    const tls = { OPERATOR_TLS_CERT_PATH: "/run/secrets/operator.pem", OPERATOR_TLS_KEY_PATH: "/run/secrets/operator.key" };
    const config = loadConfig({ ...PRODUCTION, ...tls, OPERATOR_HOST: "0.0.0.0" });
    expect(config.operatorTls).toEqual({ certPath: "/run/secrets/operator.pem", keyPath: "/run/secrets/operator.key" });
    expect(loadConfig({}).operatorTls).toBeUndefined();
    // Half a pair is refused in both modes, and is no TLS.
    expect(refusal({ OPERATOR_TLS_CERT_PATH: "/c.pem" }).problems).toEqual([
      "OPERATOR_TLS_CERT_PATH is set without OPERATOR_TLS_KEY_PATH: the operator listener's TLS needs the certificate and its key",
    ]);
    expect(refusal({ ...PRODUCTION, OPERATOR_TLS_KEY_PATH: "/c.key", OPERATOR_HOST: "0.0.0.0" }).problems.map((line) => line.split(" ")[0])).toEqual([
      "OPERATOR_TLS_KEY_PATH",
      "OPERATOR_HOST=0.0.0.0",
    ]);
  });

  it("refuses TRUST_PROXY=true, and accepts a hop count or the proxies' addresses", () => {
    expect(refusal({ ...PRODUCTION, TRUST_PROXY: "true" }).problems).toEqual([
      "TRUST_PROXY=true believes X-Forwarded-For from any peer, so any client can pick the address the sign-up limits and evidence use: " +
        "set the number of proxies in front (e.g. TRUST_PROXY=1) or their addresses or CIDR ranges (e.g. TRUST_PROXY=10.0.0.0/8)",
    ]);
    expect(loadConfig({ ...PRODUCTION, TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({ ...PRODUCTION, TRUST_PROXY: "10.0.0.0/8" }).trustProxy).toEqual(["10.0.0.0/8"]);
    // Development keeps accepting it (a local proxy).
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
  });

  it("refuses one secret doing two jobs", () => {
    expect(refusal({ ...PRODUCTION, OPERATOR_TOKEN: PRODUCTION.API_KEY_PEPPER }).problems).toEqual([
      "API_KEY_PEPPER and OPERATOR_TOKEN have the same value: use a different secret for each",
    ]);
  });

  it("refuses ALLOW_VERIFICATION_OVERRIDE=true", () => {
    expect(refusal({ ...PRODUCTION, ALLOW_VERIFICATION_OVERRIDE: "true" }).problems).toEqual([
      "ALLOW_VERIFICATION_OVERRIDE=true lets operators mark sending domains verified without DNS checks: not allowed in production (unset it)",
    ]);
    expect(loadConfig({ ...PRODUCTION, ALLOW_VERIFICATION_OVERRIDE: "false" }).allowVerificationOverride).toBe(false);
  });

  it("refuses to run without DATABASE_URL or TEMPORAL_ADDRESS", () => {
    expect(refusal({ ...PRODUCTION, DATABASE_URL: undefined }).problems).toEqual([
      "DATABASE_URL is not set: production needs an external PostgreSQL (the embedded one is for development)",
    ]);
    expect(refusal({ ...PRODUCTION, TEMPORAL_ADDRESS: "" }).problems).toEqual([
      "TEMPORAL_ADDRESS is not set: production needs a Temporal cluster (the dev server is for development)",
    ]);
  });

  it("with SMTP, needs a VERP_SECRET of its own (bounce addresses outlive a cursor-secret rotation)", () => {
    expect(refusal({ ...PRODUCTION, VERP_SECRET: undefined }).problems).toEqual([expect.stringMatching(/^VERP_SECRET is not set: with SMTP/)]);
    expect(refusal({ ...PRODUCTION, VERP_SECRET: PRODUCTION.CURSOR_SECRET }).problems).toEqual([
      "CURSOR_SECRET and VERP_SECRET have the same value: use a different secret for each",
    ]);
    expect(refusal({ ...PRODUCTION, VERP_SECRET: "short" }).problems[0]).toMatch(/^VERP_SECRET/);
    // SES reports arrive over SNS, not to return paths: no VERP secret needed.
    expect(() => loadConfig({ ...PRODUCTION, EMAIL_PROVIDER: "ses", VERP_SECRET: undefined })).not.toThrow();
    expect(loadConfig(PRODUCTION).deliveryReports?.verpSecret).toBe(PRODUCTION.VERP_SECRET);
  });

  it("refuses SMTP credentials without TLS, and accepts them with SMTP_SECURE or SMTP_REQUIRE_TLS", () => {
    const smtp = { ...PRODUCTION, EMAIL_PROVIDER: "smtp", SMTP_HOST: "relay.internal", SMTP_USER: "mailer", SMTP_PASSWORD: "relay-password" };
    const error = refusal(smtp);
    expect(error.problems).toEqual([
      "SMTP_USER and SMTP_PASSWORD set without TLS: set SMTP_SECURE=true (TLS from the first byte, port 465) " +
        "or SMTP_REQUIRE_TLS=true (STARTTLS or fail), so the credentials never cross the network in clear text",
    ]);
    expect(error.message).not.toContain("relay-password");
    expect(refusal({ ...smtp, SMTP_USER: undefined, SMTP_REQUIRE_TLS: "false" }).problems[0]).toMatch(/^SMTP_PASSWORD set without TLS/);
    expect(loadConfig({ ...smtp, SMTP_SECURE: "true", SMTP_PORT: "465" }).smtp).toMatchObject({ secure: true, requireTls: false });
    expect(loadConfig({ ...smtp, SMTP_REQUIRE_TLS: "true", SMTP_PORT: "587" }).smtp).toMatchObject({ secure: false, requireTls: true });
    // No credentials, nothing to protect: a relay that trusts our network.
    expect(loadConfig({ ...PRODUCTION, EMAIL_PROVIDER: "smtp", SMTP_HOST: "relay.internal" }).smtp.requireTls).toBe(false);
  });

  it("lists every problem at once, bad values included, one line each", () => {
    const error = refusal({ NODE_ENV: "production", HTTP_PORT: "eighty", ALLOW_VERIFICATION_OVERRIDE: "true", SMTP_USER: "u" });
    expect(error.problems.map((line) => line.split(/[ =]/)[0])).toEqual([
      "HTTP_PORT",
      "API_KEY_PEPPER",
      "DATA_ENCRYPTION_KEY",
      "OPERATOR_TOKEN",
      "CURSOR_SECRET",
      "FORM_TOKEN_SECRET",
      "CONFIRMATION_SECRET",
      "ALLOW_VERIFICATION_OVERRIDE",
      "DATABASE_URL",
      "TEMPORAL_ADDRESS",
      "EMAIL_PROVIDER",
      "PUBLIC_BASE_URL",
      "SMTP_USER",
    ]);
    expect(error.message.split("\n").slice(1)).toEqual(error.problems.map((line) => `  - ${line}`));
    expect(error.message.split("\n")[0]).toBe("refusing to start: the configuration (production mode) has 13 problems:");
  });
});

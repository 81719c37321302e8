import { createServer } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { createMailClient, MailApiError, type MailErrorCode, type RetryEvent } from "../../clients/typescript/src/index.ts";
import { ErrorInfoSchema } from "../../clients/typescript/src/gen/google/rpc/error_details_pb.ts";
import { DEFAULT_RETRY, retryDelay } from "../../clients/typescript/src/retry.ts";

/**
 * The TypeScript client's retry decisions (clients/typescript/src/retry.ts)
 * for answers the running service rarely gives on demand: 5xx without
 * `retry-after`, a 413 that shares its gRPC code with a 429, and a service
 * that cannot be reached at all. The common paths (429 with retry-after,
 * 400, 402, 401) are tested against the real service in typescript.test.ts.
 */

/** An error as the service answers it over Connect: its gRPC code and the ErrorInfo with the contract's code. */
function answered(code: Code, reason: MailErrorCode, headers: Record<string, string> = {}): MailApiError {
  const info = create(ErrorInfoSchema, { reason, domain: "mail.v1" });
  return new MailApiError(new ConnectError("answer", code, new Headers(headers), [{ desc: ErrorInfoSchema, value: info }]));
}

const fixedRandom = (): number => 1;

describe("when the client retries", () => {
  it("waits longer after each 5xx without retry-after, within the jitter band and the cap", () => {
    const error = answered(Code.Unavailable, "SERVICE_UNAVAILABLE");
    const options = { ...DEFAULT_RETRY, maxAttempts: 10, maxElapsedMs: 1_000_000 };
    const highest = [1, 2, 3, 4, 5, 6].map((attempt) => retryDelay(error, attempt, 0, options, () => 1));
    const lowest = [1, 2, 3, 4, 5, 6].map((attempt) => retryDelay(error, attempt, 0, options, () => 0));
    expect(highest).toEqual([500, 1000, 2000, 4000, 8000, 10_000]);
    expect(lowest).toEqual([250, 500, 1000, 2000, 4000, 5000]);
  });

  it("waits the service's retry-after on a 429, even past the backoff cap", () => {
    const error = answered(Code.ResourceExhausted, "RATE_LIMITED", { "retry-after": "42" });
    expect(error.status).toBe(429);
    expect(retryDelay(error, 1, 0, DEFAULT_RETRY, fixedRandom)).toBe(42_000);
  });

  it("gives up when the attempts are spent or the wait would end past the call's time budget", () => {
    const error = answered(Code.Internal, "INTERNAL_ERROR");
    expect(retryDelay(error, DEFAULT_RETRY.maxAttempts, 0, DEFAULT_RETRY, fixedRandom)).toBeUndefined();
    const late = answered(Code.ResourceExhausted, "RATE_LIMITED", { "retry-after": "30" });
    expect(retryDelay(late, 1, DEFAULT_RETRY.maxElapsedMs - 29_000, DEFAULT_RETRY, fixedRandom)).toBeUndefined();
  });

  it("never retries a 413 (the same gRPC code as a 429), a 501 or any 4xx", () => {
    const answers: Array<[Code, MailErrorCode, number]> = [
      [Code.ResourceExhausted, "PAYLOAD_TOO_LARGE", 413],
      [Code.Unimplemented, "NOT_IMPLEMENTED", 501],
      [Code.InvalidArgument, "VALIDATION_ERROR", 400],
      [Code.FailedPrecondition, "INSUFFICIENT_CREDITS", 402],
      [Code.AlreadyExists, "IDEMPOTENCY_CONFLICT", 409],
      [Code.Unauthenticated, "API_KEY_INVALID", 401],
    ];
    for (const [code, reason, status] of answers) {
      const error = answered(code, reason);
      expect(error.status, reason).toBe(status);
      expect(retryDelay(error, 1, 0, DEFAULT_RETRY, fixedRandom), reason).toBeUndefined();
    }
  });

  it("retries a service it cannot reach, then throws a MailApiError without an API code", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const retries: RetryEvent[] = [];
    const mail = createMailClient({
      apiKey: "tml_test",
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 3, initialDelayMs: 10, onRetry: (event) => retries.push(event) },
    });

    const error = await mail.mail.getAccount({}).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MailApiError);
    expect(error).toMatchObject({ code: undefined, attempts: 3, retryable: true });
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
  });
});

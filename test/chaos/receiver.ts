import type { ServerResponse } from "node:http";
import { type HttpsReceiver, startHttpsReceiver, type TestCertificate } from "../adapters/http/https-receiver.ts";

/**
 * The customer's webhook endpoint of the chaos suite: a real HTTPS server
 * on 127.0.0.1 that answers 200 ("ok"), holds every request without an
 * answer ("hang", so the sender's timeout ends the attempt) or answers 500
 * ("fail"). It keeps a receipt per request, with what became of its answer:
 * only an answer handed to a connection that was still open counts as
 * received by the service ("answered").
 */
export type ReceiverMode = "ok" | "hang" | "fail";

export interface Receipt {
  readonly deliveryId: string;
  readonly attempt: number;
  readonly mode: ReceiverMode;
  status: number | undefined;
  outcome: "held" | "answered" | "aborted";
}

export interface ChaosReceiver {
  readonly port: number;
  readonly receipts: readonly Receipt[];
  mode: ReceiverMode;
  /** Receipts answered 2xx, per delivery id. */
  answeredOk(): Map<string, number>;
  close(): Promise<void>;
}

export async function startChaosReceiver(certificate: TestCertificate): Promise<ChaosReceiver> {
  const receiver: HttpsReceiver = await startHttpsReceiver(certificate);
  const receipts: Receipt[] = [];
  const held = new Set<ServerResponse>();
  const state: { mode: ReceiverMode } = { mode: "ok" };
  receiver.handle((request, response) => {
    // Bodies are not kept: a long run would hold every one of them.
    receiver.received.length = 0;
    const receipt: Receipt = {
      deliveryId: String(request.headers["service-delivery"]),
      attempt: Number(request.headers["service-attempt"]),
      mode: state.mode,
      status: undefined,
      outcome: "held",
    };
    receipts.push(receipt);
    response.once("finish", () => (receipt.outcome = "answered"));
    response.once("close", () => {
      held.delete(response);
      if (receipt.outcome === "held") receipt.outcome = "aborted";
    });
    if (state.mode === "hang") {
      held.add(response);
      return;
    }
    receipt.status = state.mode === "ok" ? 200 : 500;
    response.writeHead(receipt.status, { "content-type": "text/plain" }).end(state.mode === "ok" ? "" : "receiver failing on purpose");
  });
  return {
    port: receiver.port,
    receipts,
    get mode() {
      return state.mode;
    },
    set mode(next: ReceiverMode) {
      state.mode = next;
    },
    answeredOk() {
      const counts = new Map<string, number>();
      for (const r of receipts) {
        if (r.outcome === "answered" && r.status !== undefined && r.status < 300) counts.set(r.deliveryId, (counts.get(r.deliveryId) ?? 0) + 1);
      }
      return counts;
    },
    async close() {
      for (const response of held) response.destroy();
      await receiver.close();
    },
  };
}

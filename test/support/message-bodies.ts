import { PostgresMessageStore } from "../../src/adapters/postgres/messages/message-store.ts";
import { poolOf } from "../../src/adapters/postgres/sql.ts";
import type { App } from "../../src/wiring/api.ts";

/**
 * A message's html and text as the handoff reads them: the service's own
 * mail (confirmations, sign-in links) is sealed at rest, so tests that look
 * into an email open it the way the email service's handoff does.
 */
export async function messageBody(app: App, companyId: string, messageId: string): Promise<{ html: string; text: string }> {
  const message = await new PostgresMessageStore(poolOf(app.orm), { sealer: app.sealer }).load(companyId, messageId);
  if (!message) throw new Error(`no message ${messageId}`);
  return { html: message.html ?? "", text: message.text ?? "" };
}

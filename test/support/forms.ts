import { createServer } from "node:net";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { RESEND_WINDOW_MS } from "../../src/capabilities/forms/hosted/index.ts";
import type { Config } from "../../src/config.ts";
import type { Form } from "../../src/gen/mail/v1/mail_pb.js";
import { bearer } from "./api-harness.ts";
import { type SendingHarness, startSendingHarness } from "./sending-harness.ts";
import { messageBody } from "./message-bodies.ts";

/**
 * What the double opt-in tests over HTTP share: a real API process with its
 * worker on a Temporal dev server, sending through the simulator, whose
 * PUBLIC_BASE_URL is its own address (the confirmation links point at it),
 * and helpers that act as the visitor and read the simulator's mail.
 */

/** A port free right now: the API must know its public address before it listens. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startFormsHarness(): Promise<SendingHarness> {
  // Every visitor of these tests posts from 127.0.0.1: the per-client budget is test/hostile/signup-storm.test.ts's subject.
  return startFormsHarnessWith({ signupLimits: { perClientPerMinute: 1_000, perFormPerMinute: 1_000, perCompanyPerMinute: 1_000 } });
}

/** The same, with configuration of the test's own (limits, pace, proxy trust). */
export async function startFormsHarnessWith(overrides: Partial<Config>): Promise<SendingHarness> {
  const port = await freePort();
  return startSendingHarness({ host: "127.0.0.1", httpPort: port, publicBaseUrl: `http://127.0.0.1:${port}`, ...overrides });
}

/** The confirmation links' secret of the API process (CONFIRMATION_SECRET, as src/wiring/api.ts hands it), to forge an expired link. */
export function formTokenSecretOf(h: SendingHarness): string {
  return h.app.config.confirmationSecret;
}

export async function createDoubleOptInForm(h: SendingHarness, companyId: string, language = "en"): Promise<Form> {
  const { form } = await h.forCompany(SignupFormsService, companyId).createForm({
    name: "Weekly news",
    fields: [
      { name: "email", label: "Email", type: "email", required: true },
      { name: "firstName", label: "First name", type: "text", required: false },
    ],
    consentText: "Yes, send me the weekly newsletter.",
    doubleOptIn: true,
    language,
  });
  if (!form) throw new Error("no form");
  return form;
}

/** Signs up on the hosted page as a browser without script would: GET the page, POST its form. */
export async function signUp(h: SendingHarness, form: Form, fields: Record<string, string>): Promise<Response> {
  const page = await fetch(form.url);
  const token = /name="_token" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!token) throw new Error("no token on the hosted page");
  return fetch(form.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _token: token, _website: "", ...fields }).toString(),
  });
}

export interface ReceivedMail {
  readonly messageId: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
  readonly link: string;
}

/**
 * The confirmation email the simulator took for `email`: the message the
 * simulator accepted at handoff (its journal, simulator_handoff), with the
 * content it was handed, once the message log says `delivered`.
 */
export async function waitForConfirmationMail(h: SendingHarness, companyId: string, email: string, secret: string): Promise<ReceivedMail> {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    const { rows } = await h.db.query<{ id: string; subject: string }>(
      `select m.id, m.subject
         from message m join simulator_handoff s on s.message_id = m.id and s.outcome = 'accepted'
        where m.company_id = $1 and lower(m.recipient) = lower($2) and m.tags->>'mail_kind' = 'signup-confirmation'
        order by m.created_at desc limit 1`,
      [companyId, email],
    );
    const row = rows[0];
    if (row) {
      await h.waitForMessage(secret, row.id, (m) => m.status === "delivered");
      const { html, text } = await messageBody(h.app, companyId, row.id);
      const link = /href="([^"]+\/confirm\?token=[^"]+)"/.exec(html)?.[1];
      if (!link) throw new Error("no confirmation link in the email");
      return { messageId: row.id, subject: row.subject, html, text, link: link.replace(/&#38;|&amp;/g, "&") };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("no confirmation email reached the simulator");
}

/** The contact as GET /mail/v1/contacts/{email} shows it. */
export async function contactOverApi(h: SendingHarness, secret: string, email: string): Promise<{ status: string; consent?: { source: string; reference?: string } }> {
  const response = await h.fetch(`/mail/v1/contacts/${encodeURIComponent(email)}`, bearer(secret));
  if (response.status !== 200) throw new Error(`GET contact answered ${response.status}`);
  return (await response.json()) as { status: string; consent?: { source: string; reference?: string } };
}

/** The company's `contact.updated` rows of the webhook outbox. */
export async function contactEvents(h: SendingHarness, companyId: string): Promise<Array<Record<string, unknown>>> {
  const { rows } = await h.db.query<{ data: Record<string, unknown> }>(
    `select data from webhook_event where company_id = $1 and event = 'contact.updated' order by occurred_at, created_at`,
    [companyId],
  );
  return rows.map((row) => row.data);
}

/**
 * Waits while the clock is within a few seconds of the end of a resend
 * window, so that sign-ups a test makes "at once" fall into one window
 * (a window's edge may rightly send a second email).
 */
export async function awayFromWindowEdge(marginMs = 10_000): Promise<void> {
  const left = RESEND_WINDOW_MS - (Date.now() % RESEND_WINDOW_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

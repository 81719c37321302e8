import type { FastifyInstance, FastifyReply } from "fastify";
import {
  type ConfirmationPageOutcome,
  type DoubleOptIn,
  type HostedSignup,
  type SignupOutcome,
  submittedValues,
} from "../../../capabilities/forms/hosted/index.ts";
import { toApiError } from "../to-api-error.ts";
import { renderConfirmationPage, renderErrorPage, renderFormPage, renderThanksPage } from "./hosted-page.ts";
import { pageStrings } from "./strings.ts";

export interface HostedFormsDependencies {
  readonly signup: HostedSignup;
  /** The double opt-in confirmation pages; without it, /confirm answers 404. */
  readonly confirmation?: Pick<DoubleOptIn, "open" | "confirm">;
}

/** HTTP status of each confirmation page. */
const CONFIRMATION_STATUS: Readonly<Record<Exclude<ConfirmationPageOutcome["kind"], "not-found">, number>> = {
  ready: 200,
  confirmed: 200,
  "already-confirmed": 200,
  invalid: 400,
  expired: 400,
  // The contact unsubscribed or its address was suppressed meanwhile: the link is genuine, the state forbids it.
  "not-possible": 409,
};

/** A sign-up is a few short fields: anything bigger is not a visitor's. */
const BODY_LIMIT = 16 * 1024;

const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded";

/** The hosted pages' Content-Security-Policy: no script, nothing loaded, posts only to this service, never framed. */
const HOSTED_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

/**
 * Answers one of the service's own HTML pages (hosted forms, unsubscribe): never cached; no script, nothing loaded,
 * posts only here; framed by no site (a page has no setting naming where it may be embedded, so none may: a framed
 * confirmation button could be clickjacked).
 */
export function replyWithPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .status(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .header("content-security-policy", HOSTED_PAGE_CSP)
    .header("x-frame-options", "DENY")
    .header("referrer-policy", "no-referrer")
    .send(body);
}

/**
 * The hosted sign-up pages, reached without an API key:
 * GET /mail/v1/forms/{publicId} serves the form, POST takes a sign-up;
 * GET /mail/v1/forms/{publicId}/confirm?token=… shows the double opt-in
 * confirmation's button, POST (field `token`) confirms.
 * Answers are HTML (the visitor's browser posts a plain form); a refused
 * sign-up serves the form again with the visitor's values, the reasons and
 * a fresh token. Registered in its own encapsulated scope, so its
 * urlencoded body parser touches no other route.
 */
export async function registerHostedForms(app: FastifyInstance, deps: HostedFormsDependencies): Promise<void> {
  await app.register(async (scope) => {
    if (!scope.hasContentTypeParser(FORM_CONTENT_TYPE)) {
      scope.addContentTypeParser(FORM_CONTENT_TYPE, { parseAs: "string", bodyLimit: BODY_LIMIT }, (_request, body, done) => {
        // The first value of a repeated name wins (a form never repeats one); names are keys of a null-prototype map.
        done(null, submittedValues(new URLSearchParams(String(body))));
      });
    }

    const html = replyWithPage;

    const notFound = (reply: FastifyReply): FastifyReply => reply.status(404).header("content-type", "text/plain; charset=utf-8").send("Not found");

    // Every failure of these pages (an unreadable or oversized body, a database down) answers an HTML page, never JSON.
    scope.setErrorHandler((error, request, reply) => {
      // toApiError logs an unexpected error under the request id; the page shows the id only.
      const apiError = toApiError(error, request);
      return html(reply, apiError.httpStatus, renderErrorPage(apiError.httpStatus, request.id));
    });

    scope.get<{ Params: { publicId: string } }>("/mail/v1/forms/:publicId", async (request, reply) => {
      const opened = await deps.signup.open({ publicId: request.params.publicId });
      if (!opened) return notFound(reply);
      return html(reply, 200, renderFormPage(opened.form, { token: opened.token }));
    });

    scope.post<{ Params: { publicId: string }; Body: unknown }>("/mail/v1/forms/:publicId", { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      const body = request.body;
      const values = submittedValues(typeof body === "object" && body !== null ? Object.entries(body) : []);
      const outcome: SignupOutcome = await deps.signup.submit({ publicId: request.params.publicId, values, clientIp: request.ip });
      switch (outcome.kind) {
        case "not-found":
          return notFound(reply);
        case "accepted":
          return html(reply, 200, renderThanksPage(outcome.form, outcome.confirmationRequired));
        case "expired":
          return html(reply, 403, renderFormPage(outcome.form, { token: outcome.token, values, notice: pageStrings(outcome.form.language).expired }));
        case "invalid":
          return html(reply, 400, renderFormPage(outcome.form, { token: outcome.token, values, problems: outcome.problems }));
        case "rate-limited":
          reply.header("retry-after", String(outcome.retryAfterSeconds));
          return html(reply, 429, renderFormPage(outcome.form, { token: outcome.token, values, notice: pageStrings(outcome.form.language).tooMany }));
      }
    });

    const confirmationPage = (reply: FastifyReply, outcome: ConfirmationPageOutcome): FastifyReply => {
      if (outcome.kind === "not-found") return notFound(reply);
      const state = outcome.kind === "ready" ? { kind: outcome.kind, token: outcome.token } : { kind: outcome.kind };
      return html(reply, CONFIRMATION_STATUS[outcome.kind], renderConfirmationPage(outcome.form, state));
    };
    const queryToken = (query: unknown): string => {
      const token = typeof query === "object" && query !== null ? (query as Record<string, unknown>).token : undefined;
      return typeof token === "string" ? token : "";
    };

    scope.get<{ Params: { publicId: string } }>("/mail/v1/forms/:publicId/confirm", async (request, reply) => {
      if (!deps.confirmation) return notFound(reply);
      return confirmationPage(reply, await deps.confirmation.open({ publicId: request.params.publicId, token: queryToken(request.query) }));
    });

    scope.post<{ Params: { publicId: string }; Body: unknown }>("/mail/v1/forms/:publicId/confirm", { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      if (!deps.confirmation) return notFound(reply);
      // The page posts the token as a field; a POST to the link itself (some mail clients' "one-click" buttons) brings it in the query.
      const fromBody = typeof request.body === "object" && request.body !== null ? (request.body as Record<string, unknown>).token : undefined;
      const token = typeof fromBody === "string" && fromBody !== "" ? fromBody : queryToken(request.query);
      return confirmationPage(reply, await deps.confirmation.confirm({ publicId: request.params.publicId, token, clientIp: request.ip }));
    });
  });
}

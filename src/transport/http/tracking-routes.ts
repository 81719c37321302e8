import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Tracking, TrackingRequest, UnsubscribeOutcome } from "../../capabilities/tracking/index.ts";
import { escapeHtml, hostedPage, renderErrorPage } from "./hosted-forms/hosted-page.ts";
import { replyWithPage } from "./hosted-forms/register-hosted-forms.ts";
import { toApiError } from "./to-api-error.ts";

/**
 * The campaign tracking addresses (docs/tracking.md), reached without an
 * API key on the public HTTP listeners:
 *
 * - GET|HEAD /t/c/<token>: a tracked link; 302 to the campaign's own URL
 *   stored for that link (never anywhere else), 404 page for a token that
 *   is not one of ours;
 * - GET|HEAD /t/o/<token>: the open pixel; always the 1x1 GIF, whatever the
 *   token (a mail client shows nothing broken, a prober learns nothing);
 * - GET /u/<token>: the unsubscribe page in the copy's language, with a
 *   confirm button (a GET changes nothing: scanners follow links);
 * - POST /u/<token>: unsubscribes at once: the RFC 8058 one-click POST a
 *   mailbox provider sends (body `List-Unsubscribe=One-Click`, urlencoded
 *   or multipart, no cookies), or the page's button.
 *
 * A broken token never answers 500; an unexpected failure answers the
 * hosted pages' HTML error page (503 while the database is unavailable).
 */
export interface TrackingRoutesDependencies {
  readonly tracking: Pick<Tracking, "click" | "open" | "openUnsubscribePage" | "unsubscribe">;
  readonly log?: { warn(details: Record<string, unknown>, message: string): void };
}

/** The 1x1 transparent GIF of the open pixel. */
export const PIXEL_GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/** The unsubscribe page's words, by language (as the hosted forms' strings: a language not listed falls back to its primary subtag, then English). */
interface UnsubscribeStrings {
  readonly title: string;
  readonly prompt: string;
  readonly button: string;
  readonly done: string;
  readonly already: string;
  readonly invalid: string;
  readonly linkInvalid: string;
  readonly tooMany: string;
}

const STRINGS: Readonly<Record<string, UnsubscribeStrings>> = {
  en: {
    title: "Unsubscribe",
    prompt: "Do you want to stop receiving these emails?",
    button: "Unsubscribe",
    done: "You are unsubscribed. You will receive no more of these emails.",
    already: "You are already unsubscribed.",
    invalid: "This address cannot be unsubscribed here. Please contact the sender.",
    linkInvalid: "This link is not valid. Open the complete link from the email.",
    tooMany: "Too many requests right now. Please try again in a minute.",
  },
  de: {
    title: "Abmelden",
    prompt: "Möchten Sie diese E-Mails nicht mehr erhalten?",
    button: "Abmelden",
    done: "Sie sind abgemeldet. Sie erhalten diese E-Mails nicht mehr.",
    already: "Sie sind bereits abgemeldet.",
    invalid: "Diese Adresse kann hier nicht abgemeldet werden. Bitte wenden Sie sich an den Absender.",
    linkInvalid: "Dieser Link ist ungültig. Öffnen Sie den vollständigen Link aus der E-Mail.",
    tooMany: "Gerade zu viele Anfragen. Bitte in einer Minute erneut versuchen.",
  },
  fr: {
    title: "Se désinscrire",
    prompt: "Voulez-vous ne plus recevoir ces e-mails ?",
    button: "Me désinscrire",
    done: "Vous êtes désinscrit. Vous ne recevrez plus ces e-mails.",
    already: "Vous êtes déjà désinscrit.",
    invalid: "Cette adresse ne peut pas être désinscrite ici. Contactez l’expéditeur.",
    linkInvalid: "Ce lien n’est pas valide. Ouvrez le lien complet de l’e-mail.",
    tooMany: "Trop de demandes en ce moment. Réessayez dans une minute.",
  },
  es: {
    title: "Darse de baja",
    prompt: "¿Quieres dejar de recibir estos correos?",
    button: "Darme de baja",
    done: "Te has dado de baja. No recibirás más estos correos.",
    already: "Ya te habías dado de baja.",
    invalid: "Esta dirección no se puede dar de baja aquí. Contacta con el remitente.",
    linkInvalid: "Este enlace no es válido. Abre el enlace completo del correo.",
    tooMany: "Demasiadas solicitudes ahora mismo. Inténtalo de nuevo en un minuto.",
  },
};

export function unsubscribeStrings(language: string | null | undefined): { readonly language: string; readonly strings: UnsubscribeStrings } {
  const lower = (language ?? "en").toLowerCase();
  const primary = lower.split("-")[0] ?? "";
  if (STRINGS[lower]) return { language: lower, strings: STRINGS[lower] };
  if (STRINGS[primary]) return { language: primary, strings: STRINGS[primary] };
  return { language: "en", strings: STRINGS.en as UnsubscribeStrings };
}

/** The unsubscribe page in each of its states. The button posts back to the page's own address (no action attribute). */
export function renderUnsubscribePage(language: string | null | undefined, state: "ready" | UnsubscribeOutcome["kind"] | "link-invalid"): string {
  const { language: lang, strings } = unsubscribeStrings(language);
  const alert = (text: string) => `<p role="alert">${escapeHtml(text)}</p>`;
  const status = (text: string) => `<p role="status">${escapeHtml(text)}</p>`;
  switch (state) {
    case "ready":
      return hostedPage(
        lang,
        strings.title,
        `<form method="post">
<input type="hidden" name="confirm" value="yes">
<p>${escapeHtml(strings.prompt)}</p>
<button type="submit">${escapeHtml(strings.button)}</button>
</form>`,
      );
    case "unsubscribed":
      return hostedPage(lang, strings.title, status(strings.done));
    case "already-unsubscribed":
      return hostedPage(lang, strings.title, status(strings.already));
    case "kept":
      return hostedPage(lang, strings.title, alert(strings.invalid));
    case "rate-limited":
      return hostedPage(lang, strings.title, alert(strings.tooMany));
    case "not-found":
    case "link-invalid":
      return hostedPage(lang, strings.title, alert(strings.linkInvalid));
  }
}

const BODY_LIMIT = 16 * 1024;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

function trackingRequest(request: FastifyRequest): TrackingRequest {
  return {
    method: request.method,
    userAgent: header(request, "user-agent"),
    purpose: header(request, "purpose"),
    secPurpose: header(request, "sec-purpose"),
    xMoz: header(request, "x-moz"),
    clientIp: request.ip,
    at: new Date(),
  };
}

/** True when the posted body is the RFC 8058 pair `List-Unsubscribe=One-Click` (urlencoded, or a multipart field). */
export function isOneClickBody(body: string): boolean {
  if (new URLSearchParams(body).get("List-Unsubscribe") === "One-Click") return true;
  return /name="?List-Unsubscribe"?\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click\r?\n/i.test(body);
}

export async function registerTrackingRoutes(app: FastifyInstance, deps: TrackingRoutesDependencies): Promise<void> {
  await app.register(async (scope) => {
    // Whatever a mailbox provider posts (urlencoded, multipart, nothing) is read as text: only the one-click pair matters.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, String(body)));

    const html = replyWithPage;

    // Every failure (an unreadable body, a database down) answers the hosted pages' HTML error page, never JSON; never a 500 for a token.
    scope.setErrorHandler((error, request, reply) => {
      const apiError = toApiError(error, request);
      return html(reply, apiError.httpStatus, renderErrorPage(apiError.httpStatus, request.id));
    });

    const click = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      const outcome = await deps.tracking.click({ token: request.params.token, request: trackingRequest(request) });
      switch (outcome.kind) {
        case "redirect":
          return reply.status(302).header("location", outcome.url).header("cache-control", "no-store").header("referrer-policy", "no-referrer").send();
        case "honeypot":
          return reply.status(204).header("cache-control", "no-store").send();
        case "not-found":
          return html(reply, 404, renderUnsubscribePage("en", "link-invalid"));
        case "rate-limited":
          reply.header("retry-after", String(outcome.retryAfterSeconds));
          return html(reply, 429, renderUnsubscribePage("en", "rate-limited"));
      }
    };
    scope.route<{ Params: { token: string } }>({ method: ["GET", "HEAD"], url: "/t/c/:token", exposeHeadRoute: false, handler: click });

    const pixel = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
      // The pixel answers even when recording fails: an image never shows our trouble.
      await deps.tracking.open({ token: request.params.token, request: trackingRequest(request) }).catch((error: unknown) => {
        deps.log?.warn({ err: error, requestId: request.id }, "an open could not be recorded");
      });
      return reply.status(200).header("content-type", "image/gif").header("cache-control", "no-store, private").header("content-length", PIXEL_GIF.length).send(PIXEL_GIF);
    };
    scope.route<{ Params: { token: string } }>({ method: ["GET", "HEAD"], url: "/t/o/:token", exposeHeadRoute: false, handler: pixel });

    scope.get<{ Params: { token: string } }>("/u/:token", async (request, reply) => {
      const outcome = await deps.tracking.openUnsubscribePage({ token: request.params.token });
      return outcome.kind === "ready" ? html(reply, 200, renderUnsubscribePage(outcome.language, "ready")) : html(reply, 404, renderUnsubscribePage("en", "link-invalid"));
    });

    scope.post<{ Params: { token: string }; Body: unknown }>("/u/:token", { bodyLimit: BODY_LIMIT }, async (request, reply) => {
      const body = typeof request.body === "string" ? request.body : "";
      const method = isOneClickBody(body) ? "one-click" : "page";
      const outcome = await deps.tracking.unsubscribe({ token: request.params.token, method, clientIp: request.ip });
      switch (outcome.kind) {
        case "not-found":
          return html(reply, 404, renderUnsubscribePage("en", "link-invalid"));
        case "rate-limited":
          reply.header("retry-after", String(outcome.retryAfterSeconds));
          return html(reply, 429, renderUnsubscribePage("en", "rate-limited"));
        default:
          return html(reply, 200, renderUnsubscribePage(outcome.language, outcome.kind));
      }
    });
  });
}

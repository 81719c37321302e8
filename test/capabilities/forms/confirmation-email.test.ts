import { describe, expect, it } from "vitest";
import { CONFIRMATION_EMAIL_LANGUAGES, renderConfirmationEmail } from "../../../src/capabilities/forms/hosted/index.ts";
import { sanitizeEmailHtml } from "../../../src/capabilities/messages/compose/sanitize-html.ts";
import { pageStrings } from "../../../src/transport/http/hosted-forms/strings.ts";

const LINK = "https://mail.example.test/mail/v1/forms/AbCdEfGh12345678/confirm?token=c.1.2.m";

function render(language: string, overrides: { formName?: string; consentText?: string } = {}) {
  return renderConfirmationEmail({
    language,
    formName: overrides.formName ?? "Newsletter",
    consentText: overrides.consentText ?? "Send me the newsletter.",
    link: LINK,
    validDays: 7,
  });
}

describe("the confirmation email (system template)", () => {
  it("is written in every language the hosted page speaks", () => {
    for (const language of ["de", "fr", "es"]) {
      expect(CONFIRMATION_EMAIL_LANGUAGES).toContain(language);
      // The confirmation page has its words in the language too.
      expect(pageStrings(language).confirmButton).not.toBe(pageStrings("en").confirmButton);
    }
    expect(render("en").subject).toBe("Please confirm your sign-up: Newsletter");
    expect(render("de").subject).toBe("Bitte bestätigen Sie Ihre Anmeldung: Newsletter");
    expect(render("fr").subject).toBe("Confirmez votre inscription : Newsletter");
    expect(render("es").subject).toBe("Confirma tu suscripción: Newsletter");
    // The greeting is the service's words only: nothing a visitor typed.
    expect(render("de").text.startsWith("Hallo,\n")).toBe(true);
  });

  it("falls back to the primary subtag, then to English", () => {
    expect(render("de-CH").subject).toBe(render("de").subject);
    expect(render("ja").subject).toBe(render("en").subject);
  });

  it("carries the link in the HTML (a button and the address) and in the text, and survives the send path's sanitiser", () => {
    const { html, text } = render("en");
    expect(html.split(`href="${LINK}"`)).toHaveLength(3);
    expect(text).toContain(`Confirm my sign-up: ${LINK}`);
    expect(text).toContain("Send me the newsletter.");
    expect(text).toContain("The link works for 7 days.");
    const sanitized = sanitizeEmailHtml(html);
    expect(sanitized).toContain(`href="${LINK}"`);
    expect(sanitized).toContain("Confirm my sign-up</a>");
  });

  it("escapes the operator's words and keeps the subject on one line", () => {
    const { subject, html } = render("en", { formName: "News <b>&\nmore", consentText: "<script>x</script>" });
    expect(subject).toBe("Please confirm your sign-up: News <b>& more");
    expect(html).toContain("&#60;script&#62;x&#60;/script&#62;");
    expect(html).not.toContain("<script>");
  });
});

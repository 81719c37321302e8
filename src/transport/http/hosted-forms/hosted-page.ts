import type { FieldProblemKind } from "../../../capabilities/forms/hosted/index.ts";
import { HONEYPOT_FIELD, TOKEN_FIELD } from "../../../capabilities/forms/hosted/index.ts";
import type { FormField, PublishedForm } from "../../../capabilities/forms/index.ts";
import { type PageStrings, pageStrings } from "./strings.ts";

/**
 * The hosted sign-up page: plain HTML, no script, in the form's language.
 * Accessible: every input has a <label>, required fields are marked with
 * `required` and `aria-required`, a refused field points to its message
 * with `aria-describedby` and `aria-invalid`, the page-level notice is a
 * `role="alert"`. The honeypot is off-screen, out of the tab order and
 * hidden from assistive technology, so only bots fill it.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function problemText(kind: FieldProblemKind, strings: PageStrings): string {
  switch (kind) {
    case "required":
      return strings.required;
    case "invalid-email":
      return strings.invalidEmail;
    case "invalid-choice":
      return strings.invalidChoice;
    case "invalid":
      return strings.invalidValue;
  }
}

/** The browser's autofill hint of the contact fields (a Map: a field name is never a property lookup). */
const AUTOCOMPLETE: ReadonlyMap<string, string> = new Map([
  ["email", "email"],
  ["firstName", "given-name"],
  ["lastName", "family-name"],
  ["company", "organization"],
  ["phone", "tel"],
]);

export interface PageState {
  readonly token: string;
  /** What the visitor sent, shown again after a refusal. */
  readonly values?: Readonly<Record<string, string>>;
  readonly problems?: Readonly<Record<string, FieldProblemKind>>;
  /** A page-level message (expired page, too many attempts). */
  readonly notice?: string;
}

function fieldHtml(field: FormField, index: number, state: PageState, strings: PageStrings): string {
  const id = `f${index}`;
  const value = state.values?.[field.name] ?? "";
  const problem = state.problems?.[field.name];
  const errorId = `${id}-error`;
  const aria = `${field.required ? ' required aria-required="true"' : ""}${problem ? ` aria-invalid="true" aria-describedby="${errorId}"` : ""}`;
  const error = problem ? `<p class="error" id="${errorId}">${escapeHtml(problemText(problem, strings))}</p>` : "";
  const name = escapeHtml(field.name);
  const label = escapeHtml(field.label);
  if (field.type === "checkbox") {
    return `<div class="field checkbox"><input type="checkbox" id="${id}" name="${name}" value="yes"${value !== "" ? " checked" : ""}${aria}><label for="${id}">${label}</label>${error}</div>`;
  }
  if (field.type === "select") {
    const options = field.options
      .map((o) => `<option value="${escapeHtml(o)}"${o === value ? " selected" : ""}>${escapeHtml(o)}</option>`)
      .join("");
    return `<div class="field"><label for="${id}">${label}</label><select id="${id}" name="${name}"${aria}><option value="">${escapeHtml(strings.choose)}</option>${options}</select>${error}</div>`;
  }
  const type = field.type === "email" ? "email" : "text";
  const autocomplete = AUTOCOMPLETE.get(field.name) ?? "on";
  return `<div class="field"><label for="${id}">${label}</label><input type="${type}" id="${id}" name="${name}" value="${escapeHtml(value)}" autocomplete="${autocomplete}"${aria}>${error}</div>`;
}

function page(form: PublishedForm, body: string): string {
  return hostedPage(form.language, form.name, body);
}

/** The hosted pages' one shell (sign-up forms, confirmation, campaign unsubscribe): `body` is HTML already escaped. */
export function hostedPage(language: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
.field{margin:0 0 1rem}label{display:block;font-weight:600}.checkbox label{display:inline;font-weight:normal;margin-left:.4rem}
input[type=email],input[type=text],select{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
.error,[role=alert]{color:#a00000}.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
button{padding:.6rem 1.2rem;font-size:1rem}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/** The form, empty or with what the visitor sent and why it was refused. */
export function renderFormPage(form: PublishedForm, state: PageState): string {
  const strings = pageStrings(form.language);
  const fields = form.fields.map((field, index) => fieldHtml(field, index, state, strings)).join("\n");
  const notice = state.notice ? `<p role="alert">${escapeHtml(state.notice)}</p>\n` : "";
  return page(
    form,
    `${notice}<form method="post" action="${escapeHtml(form.url)}" novalidate>
<input type="hidden" name="${TOKEN_FIELD}" value="${escapeHtml(state.token)}">
<div class="hp" aria-hidden="true"><label for="hp">${escapeHtml(strings.leaveEmpty)}</label><input type="text" id="hp" name="${HONEYPOT_FIELD}" value="" tabindex="-1" autocomplete="off"></div>
${fields}
<p class="consent">${escapeHtml(form.consentText)}</p>
<button type="submit">${escapeHtml(strings.submit)}</button>
</form>`,
  );
}

/** What the confirmation page says (the link of the double opt-in email). */
export type ConfirmationPageState =
  | { readonly kind: "ready"; readonly token: string }
  | { readonly kind: "confirmed" | "already-confirmed" | "invalid" | "expired" | "not-possible" };

/**
 * The confirmation page. `ready`: one button that posts the token back
 * (the GET of the link changes nothing, so a mail scanner following links
 * confirms nobody). The form's action is relative: the POST goes where the
 * link was opened, whatever PUBLIC_BASE_URL says.
 */
export function renderConfirmationPage(form: PublishedForm, state: ConfirmationPageState): string {
  const strings = pageStrings(form.language);
  switch (state.kind) {
    case "ready":
      return page(
        form,
        `<form method="post" action="confirm">
<input type="hidden" name="token" value="${escapeHtml(state.token)}">
<p>${escapeHtml(strings.confirmPrompt)}</p>
<button type="submit">${escapeHtml(strings.confirmButton)}</button>
</form>`,
      );
    case "confirmed":
      return page(form, `<p role="status">${escapeHtml(strings.confirmed)}</p>`);
    case "already-confirmed":
      return page(form, `<p role="status">${escapeHtml(strings.alreadyConfirmed)}</p>`);
    case "invalid":
      return page(form, `<p role="alert">${escapeHtml(strings.linkInvalid)}</p>`);
    case "expired":
      return page(form, `<p role="alert">${escapeHtml(strings.linkExpired)}</p>`);
    case "not-possible":
      return page(form, `<p role="alert">${escapeHtml(strings.confirmNotPossible)}</p>`);
  }
}

/** The thank-you page after an accepted sign-up. */
export function renderThanksPage(form: PublishedForm, confirmationRequired: boolean): string {
  const strings = pageStrings(form.language);
  return page(form, `<p role="status">${escapeHtml(confirmationRequired ? strings.thanksConfirm : strings.thanksSubscribed)}</p>`);
}

/**
 * The page of a request the hosted pages could not answer (an unreadable
 * body, an unexpected failure): HTML like every hosted answer, never the
 * API's JSON, and nothing of the failure but the request id.
 */
export function renderErrorPage(status: number, requestId: string): string {
  const text = status >= 500 ? "Something went wrong on our side. Please try again in a few minutes." : "This request could not be read. Please go back and submit the form again.";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${status >= 500 ? "Error" : "Bad request"}</title>
</head>
<body>
<main>
<p role="alert">${escapeHtml(text)}</p>
<p>Reference: ${escapeHtml(requestId)}</p>
</main>
</body>
</html>
`;
}

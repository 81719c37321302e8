/**
 * The system template of the double opt-in confirmation email, in the
 * form's language (en, de, fr, es, as the hosted page; another language
 * falls back to its primary subtag, then to English). The operator's own
 * words in it are the form's name and its consent text, so the reader sees
 * what they are agreeing to; everything else is the service's. Nothing the
 * visitor typed is in it (no first name in the greeting): an anonymous
 * visitor could otherwise write their own text into mail sent from the
 * company's verified domain to any address.
 */
export interface ConfirmationEmailInput {
  /** The form's language (canonical BCP 47). */
  readonly language: string;
  readonly formName: string;
  readonly consentText: string;
  readonly link: string;
  /** Days the link works. */
  readonly validDays: number;
}

export interface ConfirmationEmail {
  readonly subject: string;
  readonly html: string;
  readonly text: string;
}

interface EmailStrings {
  subject(formName: string): string;
  greeting: string;
  intro(formName: string): string;
  consentLabel: string;
  button: string;
  fallback: string;
  validity(days: number): string;
  ignore: string;
}

const STRINGS: Readonly<Record<string, EmailStrings>> = {
  en: {
    subject: (form) => `Please confirm your sign-up: ${form}`,
    greeting: "Hello,",
    intro: (form) => `You (or someone using your address) signed up for “${form}”. Please confirm that you want to receive these emails.`,
    consentLabel: "What you agreed to:",
    button: "Confirm my sign-up",
    fallback: "If the button does not work, open this link:",
    validity: (days) => `The link works for ${days} days.`,
    ignore: "If you did not sign up, ignore this email: you will not be subscribed.",
  },
  de: {
    subject: (form) => `Bitte bestätigen Sie Ihre Anmeldung: ${form}`,
    greeting: "Hallo,",
    intro: (form) => `Sie (oder jemand mit Ihrer Adresse) haben sich für „${form}“ angemeldet. Bitte bestätigen Sie, dass Sie diese E-Mails erhalten möchten.`,
    consentLabel: "Ihre Einwilligung:",
    button: "Anmeldung bestätigen",
    fallback: "Falls die Schaltfläche nicht funktioniert, öffnen Sie diesen Link:",
    validity: (days) => `Der Link ist ${days} Tage gültig.`,
    ignore: "Wenn Sie sich nicht angemeldet haben, ignorieren Sie diese E-Mail: Sie werden nicht eingetragen.",
  },
  fr: {
    subject: (form) => `Confirmez votre inscription : ${form}`,
    greeting: "Bonjour,",
    intro: (form) => `Vous (ou quelqu’un utilisant votre adresse) vous êtes inscrit à « ${form} ». Confirmez que vous souhaitez recevoir ces e-mails.`,
    consentLabel: "Ce que vous avez accepté :",
    button: "Confirmer mon inscription",
    fallback: "Si le bouton ne fonctionne pas, ouvrez ce lien :",
    validity: (days) => `Le lien est valable ${days} jours.`,
    ignore: "Si vous ne vous êtes pas inscrit, ignorez cet e-mail : vous ne serez pas abonné.",
  },
  es: {
    subject: (form) => `Confirma tu suscripción: ${form}`,
    greeting: "Hola:",
    intro: (form) => `Tú (o alguien con tu dirección) te has suscrito a «${form}». Confirma que quieres recibir estos correos.`,
    consentLabel: "Lo que has aceptado:",
    button: "Confirmar mi suscripción",
    fallback: "Si el botón no funciona, abre este enlace:",
    validity: (days) => `El enlace es válido durante ${days} días.`,
    ignore: "Si no te has suscrito, ignora este correo: no se te suscribirá.",
  },
};

export const CONFIRMATION_EMAIL_LANGUAGES: readonly string[] = Object.keys(STRINGS);

function stringsFor(language: string): EmailStrings {
  const primary = language.split("-")[0]?.toLowerCase() ?? "";
  return STRINGS[language.toLowerCase()] ?? STRINGS[primary] ?? (STRINGS.en as EmailStrings);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A subject is one line: an operator's form name could hold a line break only by mistake. */
function oneLine(text: string): string {
  return text.replace(/\p{Cc}+/gu, " ").trim();
}

export function renderConfirmationEmail(input: ConfirmationEmailInput): ConfirmationEmail {
  const s = stringsFor(input.language);
  const formName = oneLine(input.formName);
  const link = escapeHtml(input.link);
  const html = `<!doctype html>
<html lang="${escapeHtml(input.language)}">
<body style="font-family: Arial, sans-serif; line-height: 1.5; color: #222222">
<p>${escapeHtml(s.greeting)}</p>
<p>${escapeHtml(s.intro(formName))}</p>
<p>${escapeHtml(s.consentLabel)}<br>${escapeHtml(input.consentText)}</p>
<p><a href="${link}" style="display: inline-block; padding: 10px 18px; background-color: #1a56db; color: #ffffff; text-decoration: none; font-weight: bold">${escapeHtml(s.button)}</a></p>
<p>${escapeHtml(s.fallback)}<br><a href="${link}">${link}</a></p>
<p>${escapeHtml(s.validity(input.validDays))} ${escapeHtml(s.ignore)}</p>
</body>
</html>
`;
  const text = [
    s.greeting,
    "",
    s.intro(formName),
    "",
    s.consentLabel,
    input.consentText,
    "",
    `${s.button}: ${input.link}`,
    "",
    `${s.validity(input.validDays)} ${s.ignore}`,
    "",
  ].join("\n");
  return { subject: s.subject(formName), html, text };
}

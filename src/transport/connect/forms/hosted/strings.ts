/**
 * The hosted page's own words, by language. The operator writes the labels
 * and the consent text in the form's language; these are the few words the
 * service adds. A language not listed falls back to its primary subtag
 * (`de-CH` to `de`), then to English.
 */
export interface PageStrings {
  readonly submit: string;
  readonly required: string;
  readonly choose: string;
  readonly invalidEmail: string;
  readonly invalidChoice: string;
  readonly invalidValue: string;
  readonly expired: string;
  readonly tooMany: string;
  readonly thanksConfirm: string;
  readonly thanksSubscribed: string;
  /** The honeypot's label: read only by bots (hidden from people and assistive technology). */
  readonly leaveEmpty: string;
}

const STRINGS: Readonly<Record<string, PageStrings>> = {
  en: {
    submit: "Sign up",
    required: "This field is required.",
    choose: "Choose…",
    invalidEmail: "Enter a valid email address.",
    invalidChoice: "Choose one of the options.",
    invalidValue: "Check this value.",
    expired: "This page has expired. Please submit the form again.",
    tooMany: "Too many attempts for this address. Please try again in a minute.",
    thanksConfirm: "Thank you! Please check your inbox and confirm your address.",
    thanksSubscribed: "Thank you for signing up!",
    leaveEmpty: "Leave this field empty",
  },
  de: {
    submit: "Anmelden",
    required: "Dieses Feld ist erforderlich.",
    choose: "Bitte wählen…",
    invalidEmail: "Bitte eine gültige E-Mail-Adresse eingeben.",
    invalidChoice: "Bitte eine der Optionen wählen.",
    invalidValue: "Bitte diesen Wert prüfen.",
    expired: "Diese Seite ist abgelaufen. Bitte das Formular erneut absenden.",
    tooMany: "Zu viele Versuche für diese Adresse. Bitte in einer Minute erneut versuchen.",
    thanksConfirm: "Danke! Bitte prüfen Sie Ihren Posteingang und bestätigen Sie Ihre Adresse.",
    thanksSubscribed: "Danke für Ihre Anmeldung!",
    leaveEmpty: "Dieses Feld leer lassen",
  },
  fr: {
    submit: "S’inscrire",
    required: "Ce champ est obligatoire.",
    choose: "Choisir…",
    invalidEmail: "Saisissez une adresse e-mail valide.",
    invalidChoice: "Choisissez une des options.",
    invalidValue: "Vérifiez cette valeur.",
    expired: "Cette page a expiré. Veuillez renvoyer le formulaire.",
    tooMany: "Trop de tentatives pour cette adresse. Réessayez dans une minute.",
    thanksConfirm: "Merci ! Vérifiez votre boîte de réception pour confirmer votre adresse.",
    thanksSubscribed: "Merci pour votre inscription !",
    leaveEmpty: "Laissez ce champ vide",
  },
  es: {
    submit: "Suscribirse",
    required: "Este campo es obligatorio.",
    choose: "Elegir…",
    invalidEmail: "Introduce una dirección de correo válida.",
    invalidChoice: "Elige una de las opciones.",
    invalidValue: "Revisa este valor.",
    expired: "Esta página ha caducado. Envía el formulario de nuevo.",
    tooMany: "Demasiados intentos para esta dirección. Inténtalo de nuevo en un minuto.",
    thanksConfirm: "¡Gracias! Revisa tu bandeja de entrada y confirma tu dirección.",
    thanksSubscribed: "¡Gracias por suscribirte!",
    leaveEmpty: "Deja este campo vacío",
  },
};

export function pageStrings(language: string): PageStrings {
  const primary = language.split("-")[0]?.toLowerCase() ?? "";
  return STRINGS[language.toLowerCase()] ?? STRINGS[primary] ?? (STRINGS.en as PageStrings);
}

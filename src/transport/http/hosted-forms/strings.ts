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
  /** The double opt-in confirmation page (the link of the confirmation email). */
  readonly confirmPrompt: string;
  readonly confirmButton: string;
  readonly confirmed: string;
  readonly alreadyConfirmed: string;
  readonly linkInvalid: string;
  readonly linkExpired: string;
  readonly confirmNotPossible: string;
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
    tooMany: "Too many sign-ups right now. Please try again in a minute.",
    thanksConfirm: "Thank you! Please check your inbox and confirm your address.",
    thanksSubscribed: "Thank you for signing up!",
    leaveEmpty: "Leave this field empty",
    confirmPrompt: "Please confirm your sign-up.",
    confirmButton: "Confirm my sign-up",
    confirmed: "Thank you! Your sign-up is confirmed.",
    alreadyConfirmed: "Your sign-up is already confirmed.",
    linkInvalid: "This confirmation link is not valid. Open the complete link from the email, or sign up again.",
    linkExpired: "This confirmation link has expired. Please sign up again to receive a new one.",
    confirmNotPossible: "This sign-up can no longer be confirmed for this address.",
  },
  de: {
    submit: "Anmelden",
    required: "Dieses Feld ist erforderlich.",
    choose: "Bitte wählen…",
    invalidEmail: "Bitte eine gültige E-Mail-Adresse eingeben.",
    invalidChoice: "Bitte eine der Optionen wählen.",
    invalidValue: "Bitte diesen Wert prüfen.",
    expired: "Diese Seite ist abgelaufen. Bitte das Formular erneut absenden.",
    tooMany: "Gerade zu viele Anmeldungen. Bitte in einer Minute erneut versuchen.",
    thanksConfirm: "Danke! Bitte prüfen Sie Ihren Posteingang und bestätigen Sie Ihre Adresse.",
    thanksSubscribed: "Danke für Ihre Anmeldung!",
    leaveEmpty: "Dieses Feld leer lassen",
    confirmPrompt: "Bitte bestätigen Sie Ihre Anmeldung.",
    confirmButton: "Anmeldung bestätigen",
    confirmed: "Danke! Ihre Anmeldung ist bestätigt.",
    alreadyConfirmed: "Ihre Anmeldung ist bereits bestätigt.",
    linkInvalid: "Dieser Bestätigungslink ist ungültig. Öffnen Sie den vollständigen Link aus der E-Mail oder melden Sie sich erneut an.",
    linkExpired: "Dieser Bestätigungslink ist abgelaufen. Bitte melden Sie sich erneut an, um einen neuen zu erhalten.",
    confirmNotPossible: "Diese Anmeldung kann für diese Adresse nicht mehr bestätigt werden.",
  },
  fr: {
    submit: "S’inscrire",
    required: "Ce champ est obligatoire.",
    choose: "Choisir…",
    invalidEmail: "Saisissez une adresse e-mail valide.",
    invalidChoice: "Choisissez une des options.",
    invalidValue: "Vérifiez cette valeur.",
    expired: "Cette page a expiré. Veuillez renvoyer le formulaire.",
    tooMany: "Trop d’inscriptions en ce moment. Réessayez dans une minute.",
    thanksConfirm: "Merci ! Vérifiez votre boîte de réception pour confirmer votre adresse.",
    thanksSubscribed: "Merci pour votre inscription !",
    leaveEmpty: "Laissez ce champ vide",
    confirmPrompt: "Veuillez confirmer votre inscription.",
    confirmButton: "Confirmer mon inscription",
    confirmed: "Merci ! Votre inscription est confirmée.",
    alreadyConfirmed: "Votre inscription est déjà confirmée.",
    linkInvalid: "Ce lien de confirmation n’est pas valide. Ouvrez le lien complet de l’e-mail, ou inscrivez-vous à nouveau.",
    linkExpired: "Ce lien de confirmation a expiré. Inscrivez-vous à nouveau pour en recevoir un nouveau.",
    confirmNotPossible: "Cette inscription ne peut plus être confirmée pour cette adresse.",
  },
  es: {
    submit: "Suscribirse",
    required: "Este campo es obligatorio.",
    choose: "Elegir…",
    invalidEmail: "Introduce una dirección de correo válida.",
    invalidChoice: "Elige una de las opciones.",
    invalidValue: "Revisa este valor.",
    expired: "Esta página ha caducado. Envía el formulario de nuevo.",
    tooMany: "Demasiadas suscripciones ahora mismo. Inténtalo de nuevo en un minuto.",
    thanksConfirm: "¡Gracias! Revisa tu bandeja de entrada y confirma tu dirección.",
    thanksSubscribed: "¡Gracias por suscribirte!",
    leaveEmpty: "Deja este campo vacío",
    confirmPrompt: "Confirma tu suscripción.",
    confirmButton: "Confirmar mi suscripción",
    confirmed: "¡Gracias! Tu suscripción está confirmada.",
    alreadyConfirmed: "Tu suscripción ya está confirmada.",
    linkInvalid: "Este enlace de confirmación no es válido. Abre el enlace completo del correo o suscríbete de nuevo.",
    linkExpired: "Este enlace de confirmación ha caducado. Suscríbete de nuevo para recibir uno nuevo.",
    confirmNotPossible: "Esta suscripción ya no se puede confirmar para esta dirección.",
  },
};

export function pageStrings(language: string): PageStrings {
  const primary = language.split("-")[0]?.toLowerCase() ?? "";
  return STRINGS[language.toLowerCase()] ?? STRINGS[primary] ?? (STRINGS.en as PageStrings);
}

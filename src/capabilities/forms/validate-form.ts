import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { FIELD_TYPES, type FieldType, type FormField, type SignupFormDraft, type ValidSignupForm } from "./types.ts";

export const FORM_LIMITS = {
  name: 200,
  fields: 30,
  fieldName: 64,
  label: 200,
  options: 100,
  option: 200,
  consentText: 5000,
  language: 35,
} as const;

/** A field name is submitted as an HTML form key and read back as a contact field or attribute. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * Names an object already answers (Object.prototype's: valueOf, toString,
 * constructor, hasOwnProperty, __proto__ …), compared case-insensitively:
 * a submitted value under such a name could be mistaken for the inherited
 * member by code that reads a plain object. Refused when a form is made;
 * the sign-up use case keeps submitted values in null-prototype maps anyway.
 */
const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype).map((name) => name.toLowerCase()));

export function isReservedFieldName(name: string): boolean {
  return RESERVED_FIELD_NAMES.has(name.toLowerCase());
}

function isFieldType(value: string): value is FieldType {
  return (FIELD_TYPES as readonly string[]).includes(value);
}

/**
 * Checks an operator's form and names every bad field in one
 * ValidationError. A form must ask for the address: exactly one field
 * named `email`, of type `email`, required (a sign-up without one could not
 * create a contact). A form needs consent text: it is the evidence of what
 * the visitor agreed to.
 */
export function validateSignupForm(draft: SignupFormDraft): ValidSignupForm {
  const problems: FieldProblem[] = [];
  const problem = (field: string, text: string): void => {
    problems.push({ field, problem: text });
  };

  const name = draft.name.trim();
  if (name === "") problem("name", "is required");
  else if ([...name].length > FORM_LIMITS.name) problem("name", `must be at most ${FORM_LIMITS.name} characters`);

  const consentText = draft.consentText.trim();
  if (consentText === "") problem("consentText", "is required: it is the consent the visitor gives");
  else if ([...consentText].length > FORM_LIMITS.consentText) problem("consentText", `must be at most ${FORM_LIMITS.consentText} characters`);

  let language = "";
  try {
    const [canonical] = draft.language.trim().length <= FORM_LIMITS.language ? Intl.getCanonicalLocales(draft.language.trim()) : [];
    if (canonical) language = canonical;
  } catch {
    // Reported below.
  }
  if (language === "") problem("language", "must be a BCP 47 language tag, e.g. en or de-CH");

  const fields: FormField[] = [];
  if (draft.fields.length > FORM_LIMITS.fields) problem("fields", `must hold at most ${FORM_LIMITS.fields} fields`);
  const seen = new Set<string>();
  draft.fields.forEach((field, index) => {
    const at = `fields[${index}]`;
    const fieldName = field.name.trim();
    const label = field.label.trim();
    const type = field.type.trim().toLowerCase();
    const options = (field.options ?? []).map((o) => o.trim());
    let ok = true;
    if (!FIELD_NAME.test(fieldName) || fieldName.length > FORM_LIMITS.fieldName) {
      problem(`${at}.name`, `must start with a letter and hold only letters, digits and _ (at most ${FORM_LIMITS.fieldName})`);
      ok = false;
    } else if (isReservedFieldName(fieldName)) {
      problem(`${at}.name`, `"${fieldName}" is a reserved name (a member of every JavaScript object); choose another`);
      ok = false;
    } else if (seen.has(fieldName.toLowerCase())) {
      problem(`${at}.name`, "is used by another field of the form");
      ok = false;
    }
    seen.add(fieldName.toLowerCase());
    if (label === "" || [...label].length > FORM_LIMITS.label) {
      problem(`${at}.label`, `is required, at most ${FORM_LIMITS.label} characters`);
      ok = false;
    }
    if (!isFieldType(type)) {
      problem(`${at}.type`, `must be one of ${FIELD_TYPES.join(", ")}`);
      return;
    }
    if (type === "select") {
      if (options.length === 0 || options.length > FORM_LIMITS.options || options.some((o) => o === "" || [...o].length > FORM_LIMITS.option)) {
        problem(`${at}.options`, `a select needs 1 to ${FORM_LIMITS.options} non-empty options`);
        ok = false;
      } else if (new Set(options).size !== options.length) {
        problem(`${at}.options`, "must not repeat an option");
        ok = false;
      }
    } else if (options.length > 0) {
      problem(`${at}.options`, "only a select field has options");
      ok = false;
    }
    if (fieldName === "email" && (type !== "email" || !field.required)) {
      problem(`${at}`, "the email field must be of type email and required");
      ok = false;
    }
    if (ok) fields.push({ name: fieldName, label, type, required: field.required, options: type === "select" ? options : [] });
  });
  if (!draft.fields.some((f) => f.name.trim() === "email")) problem("fields", "must hold a required field named email of type email");

  if (problems.length > 0) throw new ValidationError(problems);
  return { name, fields, consentText, doubleOptIn: draft.doubleOptIn, language };
}

/**
 * Template rendering for message subjects and bodies (spec: POST
 * /mail/v1/send, "Template syntax").
 *
 * Syntax
 * - A variable is `{{ name }}`; whitespace inside the braces is optional
 *   (`{{name}}` works too). Names use letters, digits, `_`, `.` and `-`.
 *   Variables are a flat object, so `{{ order.total }}` looks up the key
 *   `"order.total"`; dots do not walk into nested objects.
 * - A fallback is `{{ name | default:fallback }}`. Unquoted, the fallback is
 *   the text up to the closing `}}` with surrounding whitespace trimmed; it
 *   cannot contain `}` or `|`. Wrapped in `"..."` or `'...'` it is taken
 *   verbatim and may contain `}` and `|` (but not its own quote character;
 *   there are no escapes). Quotes are only special when they wrap the whole
 *   fallback.
 * - Anything else that starts with `{{` (unknown filters, bad names, a
 *   missing `}}`) is left in the output unchanged, so a stray `{{` in content
 *   never breaks a message. `{{{ name }}}` is not a "raw" form: it renders
 *   `{`, the escaped value and `}`.
 *
 * Values
 * - Values are always inserted as text. In the HTML context they are
 *   HTML-escaped (`&`, `<`, `>`, `"`, `'`), so a value can neither add markup
 *   nor break out of an attribute. In the text and subject contexts they are
 *   inserted as they are.
 * - Numbers and booleans are rendered with `String()`.
 * - A variable that is absent or null renders as its fallback, or as the
 *   empty string when there is none: missing personalisation must not block
 *   a transactional message, and the sender controls the fallback. An empty
 *   string value also takes the fallback (so `{{ firstName | default:there }}`
 *   reads well for an empty name); `false` and `0` are real values and are
 *   shown.
 * - Fallback text is a value too and is escaped the same way.
 * - The rendered subject has every run of CR/LF and other control
 *   characters (C0 except tab, and DEL) replaced by one space, so a value
 *   (or the template) can never start a new mail header line nor smuggle a
 *   control character into one: the rendered subject meets the rules of a
 *   subject sent directly.
 *
 * Variable lookup only considers the object's own keys: `{{ constructor }}`
 * renders as missing, never as something inherited from Object.prototype.
 *
 * Limits
 * - A rendered message part is held to the limit of the same field sent
 *   directly (subject 500, html 400,000, text 100,000 characters):
 *   variables (each at most 10,000 characters, see validate-send.ts) could
 *   otherwise grow a part far past it. Over the limit, the send is refused
 *   with VALIDATION_ERROR naming the part.
 */
import { ValidationError } from "../../../contract/api-error.ts";
import { exceedsCodePoints } from "./text-rules.ts";
import { SEND_LIMITS } from "./send-limits.ts";

export type VariableValue = string | number | boolean | null;
export type TemplateVariables = Readonly<Record<string, VariableValue>>;
export type TemplateContext = "html" | "text" | "subject";

/**
 * `{{ name }}` or `{{ name | default:... }}`.
 * Groups: 1 name, 2 "double-quoted" fallback, 3 'single-quoted' fallback,
 * 4 unquoted fallback (untrimmed).
 *
 * Written so that it cannot backtrack quadratically on hostile input (html
 * may be 400,000 characters): no two adjacent parts can match the same
 * characters, and the unquoted fallback has no leading or trailing `\s*` of
 * its own (it is trimmed in code instead).
 */
const PLACEHOLDER =
  /\{\{\s*([A-Za-z0-9_.-]+)\s*(?:\}\}|\|\s*default\s*:(?:\s*(?:"([^"]*)"|'([^']*)')\s*\}\}|([^}|]*)\}\}))/g;

/**
 * The variable names a template part uses, in order of first use, each
 * once: the placeholders renderTemplate would fill (text that only looks
 * like one is left out, as rendering leaves it alone).
 */
export function templateVariableNames(...sources: readonly string[]): string[] {
  const names = new Set<string>();
  for (const source of sources) {
    for (const match of source.matchAll(PLACEHOLDER)) {
      if (match[1] !== undefined) names.add(match[1]);
    }
  }
  return [...names];
}

export function renderTemplate(source: string, variables: TemplateVariables, context: TemplateContext): string {
  return render(source, variables, context, Number.POSITIVE_INFINITY);
}

/** Thrown inside the replacer to stop rendering a part that is already over its budget. */
class OverBudget extends Error {}

/** renderTemplate, giving up (OverBudget) once the output passes `budget` UTF-16 code units. */
function render(source: string, variables: TemplateVariables, context: TemplateContext, budget: number): string {
  // Output length minus source length, so far.
  let growth = 0;
  const rendered = source.replace(
    PLACEHOLDER,
    (
      match: string,
      name: string,
      doubleQuoted: string | undefined,
      singleQuoted: string | undefined,
      unquoted: string | undefined,
      offset: number,
    ) => {
      const fallback = doubleQuoted ?? singleQuoted ?? unquoted?.trim();
      const text = valueText(lookup(variables, name), fallback);
      const value = context === "html" ? escapeHtml(text) : text;
      growth += value.length - match.length;
      // The output up to here is already part of the result.
      if (offset + match.length + growth > budget) throw new OverBudget();
      return value;
    },
  );
  return context === "subject" ? singleLine(rendered) : rendered;
}

export interface MessageContent {
  readonly subject: string;
  readonly html: string;
  readonly text?: string | undefined;
}

export interface RenderedContent {
  readonly subject: string;
  readonly html: string;
  readonly text?: string;
}

/** The parts a caller sent alongside a template: each replaces the template's own. */
export interface ContentReplacements {
  readonly subject?: string | undefined;
  readonly html?: string | undefined;
  readonly text?: string | undefined;
}

/** A rendered part has the limit of the same field sent directly. */
const RENDERED_LIMITS: Readonly<Record<TemplateContext, number>> = { subject: SEND_LIMITS.subject, html: SEND_LIMITS.html, text: SEND_LIMITS.text };

/**
 * Renders all parts of a message with the same variables, each in its own
 * context. A part given in `replacements` is taken as it is instead (neither
 * rendered nor checked again: it was validated as sent). Throws a
 * ValidationError naming the part when a rendered part is over its limit.
 * The HTML still needs `sanitizeEmailHtml` afterwards (escaping makes the
 * values safe, not the template source).
 */
export function renderMessageContent(
  content: MessageContent,
  variables: TemplateVariables,
  replacements: ContentReplacements = {},
): RenderedContent {
  const subject = replacements.subject ?? renderPart(content.subject, variables, "subject");
  const html = replacements.html ?? renderPart(content.html, variables, "html");
  const text = replacements.text ?? (content.text === undefined ? undefined : renderPart(content.text, variables, "text"));
  return text === undefined ? { subject, html } : { subject, html, text };
}

/**
 * One part, held to its limit. A string has at least as many UTF-16 code
 * units as code points and at most twice as many, so past twice the limit
 * in code units the part is over it for sure: rendering stops there rather
 * than building a string of any size (a large template repeating a long
 * value). The subject is measured after its line breaks are joined, which
 * only shortens it; its template is at most 500 characters, so it needs no
 * early stop.
 */
function renderPart(source: string, variables: TemplateVariables, context: TemplateContext): string {
  const limit = RENDERED_LIMITS[context];
  let rendered: string;
  try {
    rendered = render(source, variables, context, context === "subject" ? Number.POSITIVE_INFINITY : 2 * limit);
  } catch (error: unknown) {
    if (error instanceof OverBudget) throw tooLong(context, limit);
    throw error;
  }
  if (exceedsCodePoints(rendered, limit)) throw tooLong(context, limit);
  return rendered;
}

function tooLong(field: TemplateContext, limit: number): ValidationError {
  return new ValidationError([{ field, problem: `rendered template is longer than ${limit} characters` }]);
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

function lookup(variables: TemplateVariables, name: string): VariableValue | undefined {
  return Object.hasOwn(variables, name) ? variables[name] : undefined;
}

function valueText(value: VariableValue | undefined, fallback: string | undefined): string {
  if (value === undefined || value === null || value === "") return fallback ?? "";
  return typeof value === "string" ? value : String(value);
}

function singleLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\x00-\x08\x0a-\x1f\x7f]+/g, " ");
}

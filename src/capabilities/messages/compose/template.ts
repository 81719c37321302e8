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
 * - The rendered subject has every run of CR/LF replaced by one space, so a
 *   value (or the template) can never start a new mail header line.
 *
 * Variable lookup only considers the object's own keys: `{{ constructor }}`
 * renders as missing, never as something inherited from Object.prototype.
 */

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

export function renderTemplate(source: string, variables: TemplateVariables, context: TemplateContext): string {
  const rendered = source.replace(
    PLACEHOLDER,
    (_match: string, name: string, doubleQuoted?: string, singleQuoted?: string, unquoted?: string) => {
      const fallback = doubleQuoted ?? singleQuoted ?? unquoted?.trim();
      const text = valueText(lookup(variables, name), fallback);
      return context === "html" ? escapeHtml(text) : text;
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

/**
 * Renders all parts of a message with the same variables, each in its own
 * context. The HTML still needs `sanitizeEmailHtml` afterwards (escaping
 * makes the values safe, not the template source).
 */
export function renderMessageContent(content: MessageContent, variables: TemplateVariables): RenderedContent {
  const subject = renderTemplate(content.subject, variables, "subject");
  const html = renderTemplate(content.html, variables, "html");
  if (content.text === undefined) return { subject, html };
  return { subject, html, text: renderTemplate(content.text, variables, "text") };
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
  return text.replace(/[\r\n]+/g, " ");
}

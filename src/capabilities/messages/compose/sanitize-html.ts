import sanitizeHtml from "sanitize-html";

/**
 * Removes unsafe content from customer-supplied email HTML (spec: html
 * "unsafe content is removed") while keeping ordinary email markup: table
 * layouts with presentational attributes, inline styles, images and links.
 *
 * Policy, and why:
 * - Allow-list of tags and attributes. Everything else is dropped with its
 *   attributes; for the dangerous containers (script, style, iframe, object,
 *   ...) the contents are dropped too, elsewhere the text is kept.
 * - `<style>` blocks are removed: sanitize-html cannot sanitise a stylesheet,
 *   and CSS can load URLs or (in old engines) run script. Inline `style`
 *   attributes are kept but parsed and filtered: only a list of layout and
 *   typography properties survives, and only with plain values (keywords,
 *   numbers with units, `#hex`, quoted font names, rgb()/hsl()). No `url(`,
 *   `expression(`, `:` or backslash escapes can pass, so neither
 *   `url(javascript:...)` nor obfuscated forms of it survive.
 * - URLs: every URL-bearing attribute (href, src, background, and the rest
 *   of URL_ATTRIBUTES, allowed today or not) is scheme-checked: links and
 *   backgrounds may use http, https, mailto and tel; images http, https,
 *   `cid:` (inline attachments) and `data:` for raster image types only.
 *   Relative URLs are left alone (harmless, meaningless in mail) but
 *   protocol-relative ones (`//host`) are removed, and so is anything that
 *   merely looks like another scheme. The check runs on the entity-decoded
 *   value with whitespace and control characters removed, so
 *   `jav&#x09;ascript:` is recognised as `javascript:`.
 * - No event handlers (`on*`), `<base>`, `<link>`, `<meta>` (refresh or
 *   otherwise), forms or embedded content. HTML comments are removed, which
 *   also removes Outlook conditional comments.
 *
 * The function only returns the cleaned string; it does not report what it
 * removed and never logs.
 */
export function sanitizeEmailHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}

// ------------------------------------------------------------------- styles

// One CSS value token. Deliberately no `:` `\` `*` `;` and no `(` outside
// the colour functions. Every token is delimited by a separator (below), so
// the combined pattern cannot backtrack badly.
const TOKEN = [
  String.raw`(?:rgba?|hsla?)\([-+0-9.%\s,/]*\)`,
  String.raw`#[0-9a-f]{3,8}`,
  String.raw`[-+]?(?:\d+\.?\d*|\.\d+)(?:%|[a-z]{1,4})?`,
  String.raw`-?[a-z][a-z0-9-]*`,
  String.raw`"[a-z0-9 _.-]*"`,
  String.raw`'[a-z0-9 _.-]*'`,
].join("|");
const SEPARATOR = String.raw`(?:\s*[,/]\s*|\s+)`;
/** A value built only from the tokens above (e.g. `bold 12px/1.5 "Segoe UI", sans-serif`). */
export const SAFE_CSS_VALUE = new RegExp(`^(?:${TOKEN})(?:${SEPARATOR}(?:${TOKEN}))*$`, "i");

const SIDES = ["top", "right", "bottom", "left"] as const;

const STYLE_PROPERTIES: readonly string[] = [
  "color",
  "background-color",
  // The shorthand is common in email; its value passes the same token filter,
  // so a url() (background image) is refused.
  "background",
  "font",
  "font-family",
  "font-size",
  "font-style",
  "font-variant",
  "font-weight",
  "text-align",
  "text-decoration",
  "text-indent",
  "text-transform",
  "letter-spacing",
  "word-spacing",
  "line-height",
  "white-space",
  "word-break",
  "word-wrap",
  "overflow-wrap",
  "direction",
  "vertical-align",
  "display",
  "float",
  "clear",
  "overflow",
  "opacity",
  "box-sizing",
  "table-layout",
  "list-style-type",
  "list-style-position",
  "width",
  "min-width",
  "max-width",
  "height",
  "min-height",
  "max-height",
  "padding",
  ...SIDES.map((s) => `padding-${s}`),
  "margin",
  ...SIDES.map((s) => `margin-${s}`),
  "border",
  "border-color",
  "border-style",
  "border-width",
  "border-collapse",
  "border-spacing",
  "border-radius",
  ...SIDES.flatMap((s) => [`border-${s}`, `border-${s}-color`, `border-${s}-style`, `border-${s}-width`]),
  "border-top-left-radius",
  "border-top-right-radius",
  "border-bottom-left-radius",
  "border-bottom-right-radius",
  // Client-specific properties found in most email templates.
  "-webkit-text-size-adjust",
  "-ms-text-size-adjust",
  "mso-line-height-rule",
  "mso-table-lspace",
  "mso-table-rspace",
  "mso-hide",
];

// -------------------------------------------------------------------- tags

const ALLOWED_TAGS: readonly string[] = [
  "html", "head", "title", "body",
  "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "td", "th",
  "h1", "h2", "h3", "h4", "h5", "h6",
  "p", "div", "span", "br", "hr", "center", "font",
  "ul", "ol", "li",
  "strong", "b", "em", "i", "u", "s", "small", "sub", "sup",
  "blockquote", "pre", "code",
  "a", "img",
];

const CELL_ATTRIBUTES = ["width", "height", "valign", "bgcolor", "background", "colspan", "rowspan", "nowrap"];

const ALLOWED_ATTRIBUTES: Record<string, sanitizeHtml.AllowedAttribute[]> = {
  // `align`, `style` and `class` appear on almost every element of an email
  // template; classes are inert once `<style>` blocks are gone.
  "*": ["style", "class", "align", "dir", "lang", "title"],
  body: ["bgcolor", "background"],
  table: ["width", "height", "bgcolor", "background", "border", "cellpadding", "cellspacing", "role"],
  thead: ["valign", "bgcolor"],
  tbody: ["valign", "bgcolor"],
  tfoot: ["valign", "bgcolor"],
  tr: ["valign", "bgcolor", "height"],
  td: CELL_ATTRIBUTES,
  th: [...CELL_ATTRIBUTES, "scope"],
  col: ["width", "span", "valign"],
  colgroup: ["width", "span", "valign"],
  img: ["src", "alt", "width", "height", "border", "hspace", "vspace"],
  a: ["href", { name: "target", values: ["_blank"] }],
  font: ["color", "face", "size"],
  hr: ["width", "size", "color", "noshade"],
  ol: ["start", "type"],
  ul: ["type"],
};

// Disallowed tags whose *contents* must go too, not only the tag.
const NON_TEXT_TAGS = [
  "script", "style", "textarea", "option", "noscript", "select",
  "iframe", "frame", "frameset", "object", "embed", "applet", "template", "xmp", "noembed", "noframes",
];

// ---------------------------------------------------------------------- urls

const LINK_SCHEMES = ["http", "https", "mailto", "tel"];
const IMAGE_SCHEMES = ["http", "https", "cid", "data"];
const RASTER_DATA_URL = /^data:image\/(?:png|gif|jpe?g|webp|bmp)[;,]/i;

/**
 * Same normalisation as sanitize-html's own scheme check (the `launder`
 * package): browsers ignore control characters, spaces and embedded comments
 * in a URL, so they are removed before looking at the scheme.
 */
function normalisedUrl(url: string): string {
  // eslint-disable-next-line no-control-regex
  let out = url.replace(/[\x00-\x20]+/g, "");
  for (;;) {
    const start = out.indexOf("<!--");
    if (start === -1) break;
    const end = out.indexOf("-->", start + 4);
    if (end === -1) break;
    out = out.slice(0, start) + out.slice(end + 3);
  }
  return out;
}

/**
 * Every attribute that can hold a URL (the HTML, SVG and legacy ones; the
 * same names as sanitize-html's own list, spelled out so that a library
 * update cannot shrink it). Whatever the allow-list lets through today or
 * tomorrow, a URL in any of these is checked by `allowedUrl`.
 */
const URL_ATTRIBUTES: ReadonlySet<string> = new Set([
  "href", "src", "background", "cite", "action", "formaction", "data", "xlink:href", "poster", "ping", "longdesc",
  "usemap", "codebase", "classid", "archive", "profile", "manifest", "itemid", "dynsrc", "lowsrc", "srcset",
]);

function schemesOf(tagName: string): readonly string[] {
  return tagName === "img" ? IMAGE_SCHEMES : LINK_SCHEMES;
}

/**
 * Whether a URL attribute of `tagName` may keep `value`: a relative
 * reference, or an allowed scheme of the tag. The check runs on the
 * entity-decoded value (the parser decodes it) with controls, whitespace and
 * comments removed. Anything before a `:` that comes ahead of the first `/`,
 * `?`, `#` or `\` counts as a scheme, even one a browser would not accept
 * (`` `javascript: ``): what looks like a scheme must be an allowed one.
 * `data:` is allowed for `img` so that inline images work, but only for
 * raster types: an SVG or HTML payload has no business in a mail image.
 * A URL holding `<` or `>` is refused outright: a real one has them
 * percent-encoded, and with a comment inside (`data:<!-- -->image/png`)
 * readers disagree on what it says (some skip the comment, browsers keep it).
 */
function allowedUrl(tagName: string, value: string): boolean {
  if (/[<>]/.test(value)) return false;
  const url = normalisedUrl(value);
  if (/^[/\\]{2}/.test(url)) return false;
  const end = url.search(/[:/?#\\]/);
  if (end === -1 || url[end] !== ":") return true;
  const scheme = url.slice(0, end).toLowerCase();
  if (!schemesOf(tagName).includes(scheme)) return false;
  return scheme !== "data" || RASTER_DATA_URL.test(url);
}

/** Drops every URL attribute whose value `allowedUrl` refuses (on every tag). */
function checkUrlAttributes(tagName: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  const kept = Object.entries(attribs).filter(([name, value]) => !URL_ATTRIBUTES.has(name.toLowerCase()) || allowedUrl(tagName, value));
  return { tagName, attribs: Object.fromEntries(kept) };
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedStyles: {
    "*": Object.fromEntries(STYLE_PROPERTIES.map((p) => [p, [SAFE_CSS_VALUE]])),
  },
  allowedSchemes: LINK_SCHEMES,
  allowedSchemesByTag: { img: IMAGE_SCHEMES },
  // The library checks the same attributes against the same schemes too:
  // two independent checks of every URL-bearing attribute.
  allowedSchemesAppliedToAttributes: [...URL_ATTRIBUTES],
  allowProtocolRelative: false,
  nonTextTags: NON_TEXT_TAGS,
  disallowedTagsMode: "discard",
  transformTags: { "*": checkUrlAttributes },
  parseStyleAttributes: true,
};

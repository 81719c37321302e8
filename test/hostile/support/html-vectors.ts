import fc from "fast-check";

/**
 * Reads sanitised HTML the way a browser (or a mail client) would and lists
 * every way it could still run script: elements that run or embed, event
 * handlers, URL attributes whose entity-decoded, whitespace-stripped value
 * has a scheme other than the allowed ones or is protocol-relative, styles
 * that load or evaluate anything, and any `<` that is not part of a
 * well-formed tag (text that could re-form into markup in a later parse).
 *
 * The verdict does not depend on the sanitiser's exact output, only on what
 * the output could do; an empty list means "no execution vector".
 */

const URL_ATTRIBUTES = new Set([
  "href", "src", "background", "cite", "action", "formaction", "data", "poster", "longdesc", "dynsrc", "lowsrc", "codebase", "ping", "xlink:href", "usemap", "srcset", "manifest", "profile", "classid", "archive", "itemid",
]);
/**
 * Allowed schemes after decoding: web, mail, phone, inline attachment and
 * raster data images; or a relative reference (nothing that looks like a
 * scheme before the first `/`, `?`, `#` or `\`, which browsers read as `/`).
 */
const SAFE_URL = /^(?:https?:|mailto:|tel:|cid:|data:image\/(?:png|gif|jpe?g|webp|bmp)[;,]|[^:/?#\\]*(?:[/?#\\]|$))/i;
const NEVER_TAGS = new Set([
  "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "base", "meta", "link",
  "form", "input", "button", "textarea", "select", "option", "isindex", "template", "noscript", "xmp", "video", "audio",
  "source", "picture", "details", "marquee", "set", "animate", "use", "param", "portal", "noembed", "noframes", "plaintext", "listing",
]);
/** Attributes no allowed element needs and several abuse. */
const NEVER_ATTRIBUTES = new Set(["srcset", "formaction", "action", "xlink:href", "srcdoc", "ping", "data", "codebase", "dynsrc", "lowsrc", "longdesc", "poster", "is", "http-equiv"]);

const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", colon: ":", tab: "\t", newline: "\n", lpar: "(", rpar: ")", sol: "/", bsol: "\\", nbsp: "\u00a0" };

/** Decodes the character references a browser decodes in attribute values. */
export function decodeEntities(value: string): string {
  return value.replace(/&(?:#x([0-9a-f]+)|#([0-9]+)|([a-z]+));?/gi, (all, hex?: string, dec?: string, name?: string) => {
    const code = hex !== undefined ? Number.parseInt(hex, 16) : dec !== undefined ? Number.parseInt(dec, 10) : undefined;
    if (code !== undefined) return code > 0x10ffff ? "\ufffd" : String.fromCodePoint(code);
    return NAMED[(name ?? "").toLowerCase()] ?? all;
  });
}

export function executionVectors(html: string): string[] {
  const found: string[] = [];
  const tags = [...html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:\s+[^\s"'>/=]+(?:="[^"]*")?)*)\s*\/?>/g)];
  const angleBrackets = html.split("<").length - 1;
  if (tags.length !== angleBrackets) found.push(`a "<" that is not a well-formed tag in ${JSON.stringify(html.slice(0, 200))}`);
  for (const [, , rawName = "", attributes = ""] of tags) {
    const name = rawName.toLowerCase();
    if (NEVER_TAGS.has(name) || name.includes(":")) found.push(`element <${name}>`);
    for (const [, rawAttribute = "", rawValue = ""] of attributes.matchAll(/([^\s"'>/=]+)(?:="([^"]*)")?/g)) {
      const attribute = rawAttribute.toLowerCase();
      const value = decodeEntities(rawValue);
      if (attribute.startsWith("on")) found.push(`event handler ${attribute} on <${name}>`);
      if (NEVER_ATTRIBUTES.has(attribute)) found.push(`attribute ${attribute} on <${name}>`);
      // eslint-disable-next-line no-control-regex
      const url = value.replace(/[\x00-\x20\x7f]+/g, "");
      if (URL_ATTRIBUTES.has(attribute) && !SAFE_URL.test(url)) found.push(`${attribute}="${value}" on <${name}>`);
      if (URL_ATTRIBUTES.has(attribute) && /^[/\\]{2}/.test(url)) found.push(`protocol-relative ${attribute} on <${name}>`);
      if (attribute === "style" && /url\s*\(|expression|behavior|binding|@import|\\|javascript:|image-set|element\s*\(/i.test(value)) found.push(`style "${value}" on <${name}>`);
    }
  }
  return found;
}

// ------------------------------------------------------------------ random tag soup

const TAGS = ["a", "img", "p", "div", "table", "td", "svg", "math", "style", "script", "iframe", "noscript", "title", "textarea", "template", "form", "object", "mglyph", "mtext", "select", "option", "xmp", "b"];
const ATTRIBUTES = ["href", "src", "background", "style", "onerror", "onclick", "ONLOAD", "srcset", "xlink:href", "formaction", "title", "alt", "is", "data"];
const SCHEMES = ["javascript:", "JaVaScRiPt:", "vbscript:", "data:text/html,", "data:image/svg+xml,", "data:image/png;base64,", "https:", "mailto:", "//", "/\\", "cid:", "livescript:", ""];
const NOISE = ["", "\t", "\n", "\r", "\u0000", "\u000c", "&#9;", "&#x0A;", "&Tab;", "&colon;", "&#58;", "&#x3a", " ", "<!-- -->", "&#1;", "\u00a0", "\\"];

const noise = fc.constantFrom(...NOISE);
/** A scheme with noise spliced in at a random position, sometimes entity-encoded letter by letter. */
const scheme = fc.tuple(fc.constantFrom(...SCHEMES), noise, fc.nat(12), fc.boolean()).map(([s, n, at, encode]) => {
  const spliced = s.slice(0, at) + n + s.slice(at);
  return encode ? [...spliced].map((c) => (/[a-z]/i.test(c) ? `&#${c.charCodeAt(0)};` : c)).join("") : spliced;
});
const attributeValue = fc.oneof(
  scheme.map((s) => `${s}alert(1)`),
  fc.constantFrom("x", "alert(1)", "expression(alert(1))", "background:url(javascript:alert(1))", "color:red", '"><script>alert(1)</script>', "1x"),
);
const attribute = fc.tuple(fc.constantFrom(...ATTRIBUTES), attributeValue, fc.constantFrom('"', "'", "", "`")).map(([name, value, quote]) => ` ${name}=${quote}${value}${quote}`);
const element: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom("text", "&lt;script&gt;", "<", ">", "</", "<!--", "-->", "<![CDATA[", "]]>", "\u0000"),
    fc.tuple(fc.constantFrom(...TAGS), fc.array(attribute, { maxLength: 3 }), fc.array(tie("node"), { maxLength: 3 }), fc.boolean()).map(
      ([tag, attributes, children, closed]) => `<${tag}${attributes.join("")}>${children.join("")}${closed ? `</${tag}>` : ""}`,
    ),
  ),
})).node;
/**
 * Random HTML built from the dangerous parts: raw-text and foreign elements,
 * event handlers, URL attributes whose scheme has controls, entities and
 * comments spliced in, unclosed tags and stray markup characters.
 */
export const tagSoup = fc.array(element, { minLength: 1, maxLength: 5 }).map((parts) => parts.join(""));

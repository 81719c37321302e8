import { linkIdOf } from "./tokens.ts";

/**
 * The rewriting of one campaign copy (pure): tracked links, the open pixel,
 * the hidden honeypot link and the unsubscribe footer. Tracking.decorate
 * registers the links and issues the tokens; this module only edits text.
 *
 * - HTML: the `href` of every `<a>` and `<area>` whose address is http(s)
 *   becomes its tracked address; other schemes (mailto:, tel:, anchors)
 *   are left alone. The address is read with its character references
 *   decoded (`&amp;` is `&`), which is the URL the reader's browser would
 *   have opened, and that URL is what the click redirects to.
 * - Text: every http(s) address in the text part likewise (trailing
 *   sentence punctuation is not part of it).
 * - The footer (its unsubscribe link) is added to both parts, before
 *   `</body>` when the HTML has one; the pixel and the honeypot link are
 *   added to the HTML only, at its end, each invisible.
 */

/** A link of the campaign: its id (linkIdOf) and the URL a click on it opens. */
export interface CampaignLink {
  readonly linkId: string;
  readonly url: string;
}

const ANCHOR_HREF = /(<(?:a|area)\b[^>]*?\shref\s*=\s*)("([^"]*)"|'([^']*)'|([^\s>"'=<`]+))/gi;
const TEXT_URL = /\bhttps?:\/\/[^\s<>"]+/gi;
const TRAILING = /[.,;:!?)\]}'"]+$/;

const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** The value of an HTML attribute with its character references decoded. */
export function decodeAttribute(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** An absolute http(s) URL we may redirect to, normalised by the URL parser; undefined for anything else. */
export function trackableUrl(raw: string): string | undefined {
  const trimmed = raw.trim();
  if (!/^https?:\/\//i.test(trimmed)) return undefined;
  try {
    const url = new URL(trimmed);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Rewrites the links of `html` and `text` with `tracked(link)`; answers the edited parts and the distinct links met. */
export function rewriteLinks(
  html: string,
  text: string,
  tracked: (link: CampaignLink) => string,
): { readonly html: string; readonly text: string; readonly links: readonly CampaignLink[] } {
  const links = new Map<string, CampaignLink>();
  const linkOf = (url: string): CampaignLink => {
    const linkId = linkIdOf(url);
    const link = links.get(linkId) ?? { linkId, url };
    links.set(linkId, link);
    return link;
  };
  const newHtml = html.replace(ANCHOR_HREF, (whole, prefix: string, _quoted: string, dq?: string, sq?: string, bare?: string) => {
    const url = trackableUrl(decodeAttribute(dq ?? sq ?? bare ?? ""));
    return url ? `${prefix}"${escapeAttribute(tracked(linkOf(url)))}"` : whole;
  });
  const newText = text.replace(TEXT_URL, (found) => {
    const trailing = TRAILING.exec(found)?.[0] ?? "";
    const url = trackableUrl(found.slice(0, found.length - trailing.length));
    return url ? `${tracked(linkOf(url))}${trailing}` : found;
  });
  return { html: newHtml, text: newText, links: [...links.values()] };
}

/** The footer's words, by language (the contact's or form's; a language not listed falls back to its primary subtag, then English). */
const FOOTER: Readonly<Record<string, { readonly why: string; readonly unsubscribe: string }>> = {
  en: { why: "You receive this email because you subscribed.", unsubscribe: "Unsubscribe" },
  de: { why: "Sie erhalten diese E-Mail, weil Sie sich angemeldet haben.", unsubscribe: "Abmelden" },
  fr: { why: "Vous recevez cet e-mail car vous vous êtes inscrit.", unsubscribe: "Se désinscrire" },
  es: { why: "Recibes este correo porque te suscribiste.", unsubscribe: "Darse de baja" },
};

export function footerStrings(language: string | undefined): { readonly why: string; readonly unsubscribe: string } {
  const lower = (language ?? "en").toLowerCase();
  const primary = lower.split("-")[0] ?? "";
  return FOOTER[lower] ?? FOOTER[primary] ?? { why: "You receive this email because you subscribed.", unsubscribe: "Unsubscribe" };
}

/** Puts `fragment` before `</body>` when the HTML has one, else at its end. */
function beforeBodyEnd(html: string, fragment: string): string {
  const at = html.search(/<\/body\s*>/i);
  return at < 0 ? `${html}${fragment}` : `${html.slice(0, at)}${fragment}${html.slice(at)}`;
}

export interface Additions {
  readonly unsubscribeUrl: string;
  /** The open pixel's address; undefined when opens are not tracked. */
  readonly pixelUrl: string | undefined;
  /** The honeypot link's address; undefined when clicks are not tracked. */
  readonly honeypotUrl: string | undefined;
  readonly language: string | undefined;
}

/** The footer, pixel and honeypot link added to the (already rewritten) parts. */
export function addFooterAndPixel(html: string, text: string, add: Additions): { readonly html: string; readonly text: string } {
  const words = footerStrings(add.language);
  const unsubscribe = escapeAttribute(add.unsubscribeUrl);
  let extra = `\n<p style="font-size:12px;color:#555555;margin:24px 0 0">${escapeAttribute(words.why)} <a href="${unsubscribe}">${escapeAttribute(words.unsubscribe)}</a></p>`;
  // Invisible to people and assistive technology; a scanner that follows every address follows it.
  if (add.honeypotUrl) {
    extra += `\n<a href="${escapeAttribute(add.honeypotUrl)}" style="display:none;font-size:0;line-height:0" aria-hidden="true" tabindex="-1"></a>`;
  }
  if (add.pixelUrl) {
    extra += `\n<img src="${escapeAttribute(add.pixelUrl)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`;
  }
  const newText = `${text.replace(/\s+$/, "")}\n\n--\n${words.why}\n${words.unsubscribe}: ${add.unsubscribeUrl}\n`;
  return { html: html === "" ? html : beforeBodyEnd(html, extra), text: newText };
}

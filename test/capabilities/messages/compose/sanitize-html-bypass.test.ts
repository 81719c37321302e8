import { describe, expect, it } from "vitest";
import { sanitizeEmailHtml } from "../../../../src/capabilities/messages/compose/sanitize-html.ts";

/**
 * A bypass corpus: classic XSS filter-evasion vectors (written for this
 * test, after the well-known evasion families), each of which must come out
 * of the sanitiser without any way to run script. The verdict does not rely
 * on the sanitiser's exact output: `executionVectors` reads the output the
 * way a browser would (tags, attributes, entity-decoded URLs, styles).
 */
const CORPUS: readonly (readonly [string, string])[] = [
  // --- script elements, in every spelling
  ["plain script", "<script>alert(1)</script>"],
  ["upper-case script", "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>"],
  ["mixed-case script", "<ScRiPt>alert(1)</sCrIpT>"],
  ["split script tag", "<scr<script>ipt>alert(1)</scr</script>ipt>"],
  ["nested split script", "<<script>script>alert(1)<</script>/script>"],
  ["unclosed script", "<script>alert(1)"],
  ["unclosed script tag", '<script src="https://evil.example/x.js"'],
  ["script with slash attribute", "<script/xss src=https://evil.example/x.js></script>"],
  ["script in svg", "<svg><script>alert(1)</script></svg>"],
  ["script in math", "<math><mtext><script>alert(1)</script></mtext></math>"],
  ["script after null byte", "<scr\u0000ipt>alert(1)</script>"],
  ["script in attribute-looking text", '<p title="</p><script>alert(1)</script>">x</p>'],
  ["script behind a comment", "<!--<script>-->alert(1)<!--</script>-->"],
  ["script in conditional comment", "<!--[if gte IE 4]><script>alert(1)</script><![endif]-->"],
  ["script in CDATA", "<![CDATA[<script>alert(1)</script>]]>"],
  ["script in noscript", "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>"],
  ["script in textarea breakout", "<textarea></textarea><script>alert(1)</script>"],
  ["script in title", "<title></title><script>alert(1)</script>"],
  ["script in style breakout", "<style></style><script>alert(1)</script>"],
  ["xmp breakout", '<xmp><p title="</xmp><img src=x onerror=alert(1)>">'],

  // --- javascript: URLs with entity, whitespace and case tricks
  ["javascript href", '<a href="javascript:alert(1)">x</a>'],
  ["upper-case javascript", '<a href="JAVASCRIPT:alert(1)">x</a>'],
  ["mixed-case javascript", '<a href="JaVaScRiPt:alert(1)">x</a>'],
  ["unquoted javascript", "<a href=javascript:alert(1)>x</a>"],
  ["backtick javascript", "<a href=`javascript:alert(1)`>x</a>"],
  ["leading space", '<a href=" javascript:alert(1)">x</a>'],
  ["leading control characters", '<a href="\u0001\u0002javascript:alert(1)">x</a>'],
  ["embedded tab", '<a href="jav\tascript:alert(1)">x</a>'],
  ["embedded newline", '<a href="jav\nascript:alert(1)">x</a>'],
  ["embedded carriage return", '<a href="jav\rascript:alert(1)">x</a>'],
  ["encoded tab", '<a href="jav&#x09;ascript:alert(1)">x</a>'],
  ["encoded newline", '<a href="jav&#x0A;ascript:alert(1)">x</a>'],
  ["encoded carriage return", '<a href="jav&#x0D;ascript:alert(1)">x</a>'],
  ["named tab entity", '<a href="jav&Tab;ascript:alert(1)">x</a>'],
  ["named newline entity", '<a href="jav&NewLine;ascript:alert(1)">x</a>'],
  ["decimal entities", '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>'],
  ["padded decimal entities", '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">x</a>'],
  ["hex entities without semicolons", '<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1)">x</a>'],
  ["colon entity", '<a href="javascript&colon;alert(1)">x</a>'],
  ["encoded colon", '<a href="javascript&#58;alert(1)">x</a>'],
  ["url-encoded scheme", '<a href="javascript%3Aalert(1)">x</a>'],
  ["comment inside scheme", '<a href="java<!-- -->script:alert(1)">x</a>'],
  ["javascript in img src", '<img src="javascript:alert(1)">'],
  ["javascript in img src, entity-encoded", '<img src="&#106;avascript:alert(1)">'],
  ["javascript in td background", '<table><tr><td background="javascript:alert(1)">x</td></tr></table>'],
  ["javascript in td background, bare", '<td background="javascript:alert(1)">x</td>'],
  ["javascript in table background, tricked", '<table background="  JaVa&#x09;ScRiPt&colon;alert(1)"><tr><td>x</td></tr></table>'],
  ["javascript in body background", '<body background="javascript:alert(1)">x</body>'],
  ["javascript in th background", '<table><tr><th background="jav&#x0A;ascript:alert(1)">x</th></tr></table>'],
  ["javascript in cite", '<blockquote cite="javascript:alert(1)">x</blockquote>'],
  ["javascript in longdesc", '<img src="https://x.example/a.png" longdesc="javascript:alert(1)">'],
  ["javascript in dynsrc", '<img dynsrc="javascript:alert(1)">'],
  ["javascript in lowsrc", '<img lowsrc="javascript:alert(1)">'],
  ["javascript in poster", '<video poster="javascript:alert(1)"></video>'],

  // --- other dangerous schemes
  ["vbscript", '<a href="vbscript:msgbox(1)">x</a>'],
  ["vbscript, upper case", '<a href="VBSCRIPT:msgbox(1)">x</a>'],
  ["vbscript in background", '<table><tr><td background="vbscript:msgbox(1)">x</td></tr></table>'],
  ["data text/html link", '<a href="data:text/html,<script>alert(1)</script>">x</a>'],
  ["data text/html base64 link", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>'],
  ["data text/html image", '<img src="data:text/html,<script>alert(1)</script>">'],
  ["data svg image", '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">'],
  ["data with whitespace", '<img src=" da&#x09;ta:text/html,<script>alert(1)</script>">'],
  ["data in background", '<table><tr><td background="data:text/html,<script>alert(1)</script>">x</td></tr></table>'],
  ["livescript", '<a href="livescript:alert(1)">x</a>'],
  ["file scheme", '<a href="file:///etc/passwd">x</a>'],
  ["protocol-relative", '<a href="//evil.example/x">x</a>'],
  ["protocol-relative background", '<table><tr><td background="//evil.example/x.js">x</td></tr></table>'],

  // --- styles
  ["style expression", '<p style="width:expression(alert(1))">x</p>'],
  ["style expression with escapes", '<p style="width:e\\78 pression(alert(1))">x</p>'],
  ["style expression with comment", '<p style="width:expr/**/ession(alert(1))">x</p>'],
  ["style url javascript", '<p style="background:url(javascript:alert(1))">x</p>'],
  ["style url javascript, quoted", "<p style=\"background-image:url('javascript:alert(1)')\">x</p>"],
  ["style behavior", '<p style="behavior:url(x.htc)">x</p>'],
  ["style moz-binding", '<p style="-moz-binding:url(https://evil.example/x.xml#xss)">x</p>'],
  ["style import", '<p style="@import \'https://evil.example/x.css\'">x</p>'],
  ["style element", "<style>body{background:url(javascript:alert(1))}</style><p>x</p>"],
  ["style element with import", "<style>@import 'https://evil.example/x.css';</style>"],
  ["style entity-encoded", '<p style="width:&#101;xpression(alert(1))">x</p>'],
  ["style attribute breakout", '<p style="color:red" style="width:expression(alert(1))">x</p>'],

  // --- srcset, formaction, xlink:href and friends
  ["img srcset", '<img src="https://x.example/a.png" srcset="javascript:alert(1) 1x">'],
  ["source srcset", '<picture><source srcset="javascript:alert(1)"><img src="https://x.example/a.png"></picture>'],
  ["button formaction", '<form><button formaction="javascript:alert(1)">x</button></form>'],
  ["input formaction", '<input type="submit" formaction="javascript:alert(1)">'],
  ["form action", '<form action="javascript:alert(1)"><input type="submit"></form>'],
  ["isindex action", '<isindex action="javascript:alert(1)" type="image">'],
  ["svg xlink:href", '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>'],
  ["svg use xlink:href", '<svg><use xlink:href="data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+#x"></use></svg>'],
  ["svg animate href", '<svg><animate attributeName="href" values="javascript:alert(1)"></animate></svg>'],
  ["svg set", '<svg><a><set attributeName="href" to="javascript:alert(1)"></set><text>x</text></a></svg>'],
  ["math xlink:href", '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>'],
  ["a xlink:href", '<a xlink:href="javascript:alert(1)">x</a>'],
  ["a ping", '<a href="https://x.example" ping="javascript:alert(1)">x</a>'],
  ["object data", '<object data="javascript:alert(1)"></object>'],
  ["embed src", '<embed src="javascript:alert(1)">'],
  ["iframe src", '<iframe src="javascript:alert(1)"></iframe>'],
  ["iframe srcdoc", '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'],
  ["frameset", '<frameset><frame src="javascript:alert(1)"></frameset>'],
  ["base href", '<base href="javascript:alert(1)//"><a href="/x">x</a>'],
  ["meta refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'],
  ["link stylesheet", '<link rel="stylesheet" href="javascript:alert(1)">'],
  ["link import", '<link rel="import" href="https://evil.example/x.html">'],
  ["applet", '<applet code="x.class" codebase="javascript:alert(1)"></applet>'],
  ["template", "<template><script>alert(1)</script></template>"],

  // --- event handlers
  ["img onerror", '<img src="x" onerror="alert(1)">'],
  ["img onerror unquoted", "<img src=x onerror=alert(1)>"],
  ["img onerror upper case", '<IMG SRC="x" ONERROR="alert(1)">'],
  ["handler after slash", '<img/src="x"/onerror="alert(1)">'],
  ["handler with odd spacing", '<img src="x"\nonerror\n=\n"alert(1)">'],
  ["body onload", '<body onload="alert(1)">x</body>'],
  ["svg onload", '<svg onload="alert(1)"></svg>'],
  ["svg/onload", "<svg/onload=alert(1)>"],
  ["div onmouseover", '<div onmouseover="alert(1)">x</div>'],
  ["a onclick", '<a href="https://x.example" onclick="alert(1)">x</a>'],
  ["td onfocus autofocus", '<table><tr><td tabindex="1" autofocus onfocus="alert(1)">x</td></tr></table>'],
  ["details ontoggle", '<details open ontoggle="alert(1)">x</details>'],
  ["marquee onstart", '<marquee onstart="alert(1)">x</marquee>'],
  ["video onerror", '<video><source onerror="alert(1)"></video>'],
  ["input onfocus", '<input autofocus onfocus="alert(1)">'],
  ["handler with entities", '<img src="x" onerror="&#97;lert(1)">'],
  ["handler on allowed font", '<font color="red" onmouseover="alert(1)">x</font>'],
  ["handler on allowed table", '<table onmouseover="alert(1)"><tr><td>x</td></tr></table>'],
  ["handler in attribute name trick", '<p title="x" onmouseover=alert(1)//>x</p>'],

  // --- unclosed and malformed markup
  ["unclosed img with handler", '<img src="x" onerror="alert(1)"'],
  ["unclosed attribute quote", '<a href="javascript:alert(1)>x</a>'],
  ["unclosed tag at end", "<p>x</p><img src=x onerror=alert(1)"],
  ["half-open tag", "<<img src=x onerror=alert(1)>"],
  ["tag in attribute value", '<img alt="<script>alert(1)</script>" src="https://x.example/a.png">'],
  ["closing tag with attributes", '</p onmouseover="alert(1)"><p>x</p>'],
  ["bogus comment", "<!--><img src=x onerror=alert(1)>-->"],
  ["processing instruction", '<?xml version="1.0"?><img src=x onerror=alert(1)>'],
  ["doctype trick", "<!DOCTYPE html><img src=x onerror=alert(1)>"],
  ["namespace prefix", '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>'],
  ["html entities for angle brackets", "&lt;script&gt;alert(1)&lt;/script&gt;"],
  ["double-encoded angle brackets", "&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;"],
  ["fullwidth brackets", "\uFF1Cscript\uFF1Ealert(1)\uFF1C/script\uFF1E"],
];

// What may survive: the allow-list of sanitize-html.ts, and nothing that runs.
const URL_ATTRIBUTES = new Set(["href", "src", "background", "cite", "action", "formaction", "data", "poster", "longdesc", "dynsrc", "lowsrc", "codebase", "ping", "xlink:href", "usemap"]);
const SAFE_URL = /^(?:https?:|mailto:|tel:|cid:|data:image\/(?:png|gif|jpe?g|webp|bmp)[;,]|[^:/?#]*(?:[/?#]|$))/i;
const NEVER_TAGS = new Set([
  "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "base", "meta", "link",
  "form", "input", "button", "textarea", "select", "option", "isindex", "template", "noscript", "xmp", "video", "audio",
  "source", "picture", "details", "marquee", "set", "animate", "use",
]);

/** Decodes the character references a browser decodes in attribute values (numeric and the few named ones used here). */
function decodeEntities(value: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", colon: ":", tab: "\t", newline: "\n" };
  return value.replace(/&(?:#x([0-9a-f]+)|#([0-9]+)|([a-z]+));?/gi, (all, hex?: string, dec?: string, name?: string) => {
    if (hex !== undefined) return String.fromCodePoint(Number.parseInt(hex, 16));
    if (dec !== undefined) return String.fromCodePoint(Number.parseInt(dec, 10));
    return named[(name ?? "").toLowerCase()] ?? all;
  });
}

/**
 * Every way the sanitised output could run script, as a browser would read
 * it: dangerous elements, event handlers, URL attributes with a scheme other
 * than the allowed ones (entity-decoded, controls and whitespace removed),
 * styles that load or evaluate anything, and `<` that is not a tag (text
 * that could re-form into markup).
 */
function executionVectors(html: string): string[] {
  const found: string[] = [];
  const tags = [...html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:\s+[^\s"'>/=]+(?:="[^"]*")?)*)\s*\/?>/g)];
  const angleBrackets = html.split("<").length - 1;
  if (tags.length !== angleBrackets) found.push(`a "<" that is not a well-formed tag in ${JSON.stringify(html)}`);
  for (const [, , rawName = "", attributes = ""] of tags) {
    const name = rawName.toLowerCase();
    if (NEVER_TAGS.has(name) || name.includes(":")) found.push(`element <${name}>`);
    for (const [, rawAttribute = "", rawValue = ""] of attributes.matchAll(/([^\s"'>/=]+)(?:="([^"]*)")?/g)) {
      const attribute = rawAttribute.toLowerCase();
      const value = decodeEntities(rawValue);
      if (attribute.startsWith("on")) found.push(`event handler ${attribute} on <${name}>`);
      if (["srcset", "formaction", "action", "xlink:href", "srcdoc", "ping", "data", "codebase", "dynsrc", "lowsrc", "longdesc", "poster"].includes(attribute)) {
        found.push(`attribute ${attribute} on <${name}>`);
      }
      // eslint-disable-next-line no-control-regex
      const url = value.replace(/[\x00-\x20\x7f]+/g, "");
      if (URL_ATTRIBUTES.has(attribute) && !SAFE_URL.test(url)) found.push(`${attribute}="${value}" on <${name}>`);
      if (URL_ATTRIBUTES.has(attribute) && url.startsWith("//")) found.push(`protocol-relative ${attribute} on <${name}>`);
      if (attribute === "style" && /url\s*\(|expression|behavior|binding|@import|\\|javascript:/i.test(value)) found.push(`style "${value}" on <${name}>`);
    }
  }
  return found;
}

describe("sanitizeEmailHtml: bypass corpus", () => {
  it("the checker itself finds the vectors it looks for (it can fail)", () => {
    expect(executionVectors("<script>alert(1)</script>")).not.toEqual([]);
    expect(executionVectors('<td background="jav&#x09;ascript:alert(1)">x</td>')).not.toEqual([]);
    expect(executionVectors('<img src="x" onerror="alert(1)">')).not.toEqual([]);
    expect(executionVectors('<a href="//evil.example">x</a>')).not.toEqual([]);
    expect(executionVectors('<p style="width:expression(1)">x</p>')).not.toEqual([]);
    expect(executionVectors('<img srcset="x 1x" src="https://x.example/a.png" />')).not.toEqual([]);
    expect(executionVectors("<p>a <b</p>")).not.toEqual([]);
    expect(executionVectors('<table><tr><td background="https://x.example/bg.png">x</td></tr></table>')).toEqual([]);
  });

  it.each(CORPUS)("%s: no script execution vector survives", (_name, html) => {
    expect(executionVectors(sanitizeEmailHtml(html))).toEqual([]);
  });

  it("survives the whole corpus as one document, and sanitising twice changes nothing", () => {
    const all = CORPUS.map(([, html]) => html).join("\n");
    const once = sanitizeEmailHtml(all);
    expect(executionVectors(once)).toEqual([]);
    expect(sanitizeEmailHtml(once)).toBe(once);
  });

  it("keeps the safe URL forms the allow-list promises", () => {
    expect(sanitizeEmailHtml('<a href="https://x.example/a?b=1&amp;c=2">x</a>')).toBe('<a href="https://x.example/a?b=1&amp;c=2">x</a>');
    expect(sanitizeEmailHtml('<a href="mailto:help@x.example">x</a>')).toBe('<a href="mailto:help@x.example">x</a>');
    expect(sanitizeEmailHtml('<table><tr><td background="https://x.example/bg.png">x</td></tr></table>')).toBe(
      '<table><tr><td background="https://x.example/bg.png">x</td></tr></table>',
    );
  });
});

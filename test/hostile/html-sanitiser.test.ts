import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sanitizeEmailHtml } from "../../src/capabilities/messages/compose/sanitize-html.ts";
import { executionVectors, tagSoup } from "./support/html-vectors.ts";

/**
 * The HTML sanitiser against what the bypass corpus of
 * test/capabilities/messages/compose/sanitize-html-bypass.test.ts does not
 * hold yet: mutation XSS (markup that changes meaning when parsed again),
 * namespace confusion, raw-text elements, URL schemes hidden behind
 * controls and entities of every width, CSS escapes, and random tag soup
 * built from the dangerous parts. Each output must have no execution vector
 * (support/html-vectors.ts) and must be a fixed point: sanitising it again
 * changes nothing, so no later parse (a mail client's) can mutate it.
 */
const MUTATION_AND_NAMESPACES: readonly (readonly [string, string])[] = [
  ["style in svg in p", "<svg><p><style><img src=x onerror=alert(1)></style></p></svg>"],
  ["mglyph/style mXSS", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"],
  ["nested forms mXSS", "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>"],
  ["noscript/style breakout", "<noscript><style></noscript><img src=x onerror=alert(1)>"],
  ["title raw text", "<title><img src=x onerror=alert(1)></title>"],
  ["title attribute breakout", '<p title="</title><img src=x onerror=alert(1)>">x</p>'],
  ["textarea raw text", "<textarea><img src=x onerror=alert(1)></textarea>"],
  ["plaintext", "<plaintext><img src=x onerror=alert(1)>"],
  ["listing", "<listing>&lt;img src=x onerror=alert(1)&gt;</listing>"],
  ["noembed", "<noembed><img src=x onerror=alert(1)></noembed>"],
  ["noframes", "<noframes><img src=x onerror=alert(1)></noframes>"],
  ["iframe raw text", "<iframe><img src=x onerror=alert(1)></iframe>"],
  ["svg foreignObject", '<svg><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>'],
  ["math annotation-xml", '<math><annotation-xml encoding="text/html"><img src=x onerror=alert(1)></annotation-xml></math>'],
  ["table foster parenting", "<table><img src=x onerror=alert(1)><tr><td>x</td></tr></table>"],
  ["select breakout", "<select><img src=x onerror=alert(1)></select>"],
  ["comment with dashes", "<!-- --!><img src=x onerror=alert(1)> -->"],
  ["comment ended by --!>", "<!--x--!><img src=x onerror=alert(1)>"],
  ["unfinished comment", "<!--<img src=x onerror=alert(1)>"],
  ["cdata in html", "<![CDATA[><img src=x onerror=alert(1)>]]>"],
  ["double open", "<<SCRIPT>alert(1);//<</SCRIPT>"],
  ["slash as separator", '<SCRIPT/XSS SRC="https://evil.example/x.js"></SCRIPT>'],
  ["odd attribute name characters", "<BODY onload!#$%&()*~+-_.,:;?@[/|]^`=alert(1)>"],
  ["unclosed iframe", "<iframe src=https://evil.example/ <"],
  ["form feed separator", "<img src=x onerror\u000c=alert(1)>"],
  ["vertical tab in tag", "<img\u000bsrc=x\u000bonerror=alert(1)>"],
  ["backtick attribute", "<img src=`x`onerror=alert(1)>"],
  ["custom element", "<x-foo onclick=alert(1)>click</x-foo>"],
  ["is attribute", '<p is="x-evil" onclick="alert(1)">x</p>'],
  ["svg animate onbegin", "<svg><animate onbegin=alert(1) attributeName=x dur=1s>"],
  ["image in cid with handler", '<img src="cid:x" onerror="alert(1)">'],
];

const HIDDEN_SCHEMES: readonly (readonly [string, string])[] = [
  ["shift-out control before scheme", '<a href="&#14;javascript:alert(1)">x</a>'],
  ["NUL inside scheme", '<a href="java\u0000script:alert(1)">x</a>'],
  ["encoded NUL inside scheme", '<a href="java&#0;script:alert(1)">x</a>'],
  ["one letter encoded", '<a href="jav&#x61;script:alert(1)">x</a>'],
  ["every letter, no semicolons", '<a href="&#106&#97&#118&#97&#115&#99&#114&#105&#112&#116&#58&#97&#108&#101&#114&#116&#40&#49&#41">x</a>'],
  ["hex, upper case, in img", "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x31&#x29>"],
  ["encoded space before scheme", '<a href=" &#x20; javascript:alert(1)">x</a>'],
  ["non-breaking space before scheme", '<a href="&nbsp;javascript:alert(1)">x</a>'],
  ["vbscript with encoded colon", '<a href="vbscript&#58;msgbox(1)">x</a>'],
  ["data html, url-encoded", '<a href="data:text/html;charset=utf-8,%3Cscript%3Ealert(1)%3C/script%3E">x</a>'],
  ["data svg, plain", '<img src="data:image/svg+xml,<svg onload=alert(1)>">'],
  ["data png with handler", '<img src="data:image/png;base64,iVBOR" onload="alert(1)">'],
  ["backslashes as slashes", '<a href="/\\evil.example/x">x</a>'],
  ["two backslashes", '<a href="\\\\evil.example/x">x</a>'],
  ["encoded slash, protocol-relative", '<a href="/&#47;evil.example/x">x</a>'],
  ["tab inside protocol-relative", '<a href="/\t/evil.example/x">x</a>'],
  ["javascript in background with entities", '<td background="&#x6A;avascript:alert(1)">x</td>'],
  ["code points past Unicode", '<a href="&#x110000;javascript:alert(1)">x</a>'],
  // Found by the tag soup below: a comment inside a URL, which some readers skip and others keep.
  ["comment before a scheme", '<table background="&lt;!-- --&gt;mailto:alert(1)">x</table>'],
  ["comment inside a data URL", '<img src="data:&lt;!-- --&gt;image/png;base64,alert(1)">'],
  ["full-width colon", '<a href="javascript\uFF1Aalert(1)">x</a>'],
];

const CSS: readonly (readonly [string, string])[] = [
  ["url after control character", '<div style="background-image: url(&#1;javascript:alert(1))">x</div>'],
  ["expression with comment", '<div style="xss:expr/*XSS*/ession(alert(1))">x</div>'],
  ["escaped url", '<div style="background: u\\rl(javascript:alert(1))">x</div>'],
  ["escaped expression", '<div style="width: \\65 xpression(alert(1))">x</div>'],
  ["behavior", '<a href="https://x.example" style="behavior:url(#default#time2)">x</a>'],
  ["image-set", '<div style="background-image:image-set(url(https://evil.example/x.png) 1x)">x</div>'],
  ["import in style element", '<style>@import url("javascript:alert(1)");</style><p>x</p>'],
  ["style attribute with quotes", "<p style=\"color:red;background:url('https://evil.example/track.png')\">x</p>"],
  ["entity-encoded parenthesis", '<p style="background:url&#40;javascript:alert(1)&#41;">x</p>'],
];

const SAFE: readonly (readonly [string, string])[] = [
  ["table layout", '<table width="600" cellpadding="0"><tr><td bgcolor="#ffffff" style="padding:8px 12px;font-family:Arial, sans-serif">Hello</td></tr></table>'],
  ["link and image", '<a href="https://shop.example/orders/1?x=1&amp;y=2" target="_blank"><img src="https://cdn.example/logo.png" alt="Logo" width="120"></a>'],
  ["inline image", '<img src="cid:logo@shop.example" alt="">'],
  ["mailto and tel", '<a href="mailto:help@shop.example">mail</a> <a href="tel:+14155550123">call</a>'],
];

describe("HTML sanitiser: the checker can fail", () => {
  it("finds each kind of vector it looks for, and passes safe email markup", () => {
    expect(executionVectors("<script>alert(1)</script>")).not.toEqual([]);
    expect(executionVectors('<a href="&#106;avascript:alert(1)">x</a>')).not.toEqual([]);
    expect(executionVectors('<a href="/\\evil.example">x</a>')).not.toEqual([]);
    expect(executionVectors('<p style="background:url(x)">x</p>')).not.toEqual([]);
    expect(executionVectors("<img src=x onerror=alert(1)")).not.toEqual([]);
    expect(executionVectors('<p is="x">x</p>')).not.toEqual([]);
    expect(executionVectors('<a href="vbscript:x">x</a>')).not.toEqual([]);
    for (const [, html] of SAFE) expect(executionVectors(html)).toEqual([]);
  });
});

describe.each([
  ["mutation XSS and namespaces", MUTATION_AND_NAMESPACES],
  ["schemes hidden behind controls and entities", HIDDEN_SCHEMES],
  ["CSS", CSS],
] as const)("HTML sanitiser bypass corpus: %s", (_family, corpus) => {
  it.each(corpus)("%s: no execution vector, and a second pass changes nothing", (_name, html) => {
    const once = sanitizeEmailHtml(html);
    expect(executionVectors(once)).toEqual([]);
    expect(sanitizeEmailHtml(once)).toBe(once);
  });
});

describe("HTML sanitiser: safe email markup survives", () => {
  it.each(SAFE)("%s keeps its links, images and layout", (_name, html) => {
    const once = sanitizeEmailHtml(html);
    expect(executionVectors(once)).toEqual([]);
    for (const kept of html.match(/(?:href|src)="[^"]+"/g) ?? []) expect(once).toContain(kept);
  });
});

describe("HTML sanitiser: random tag soup from the dangerous parts", () => {
  it("never leaves an execution vector", () => {
    fc.assert(
      fc.property(tagSoup, (html) => {
        expect(executionVectors(sanitizeEmailHtml(html))).toEqual([]);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) * 20 },
    );
  });

  it("settles: passes over its own output leave no vector, and the second pass is a fixed point", () => {
    // The sanitiser's parser is not the browser's: a first output may nest elements a browser
    // would re-nest (`<p><p>x</p></p>`), which a second pass normalises. What matters is that no
    // re-parse can produce a vector, and that the output stops changing.
    fc.assert(
      fc.property(tagSoup, (html) => {
        const once = sanitizeEmailHtml(html);
        const twice = sanitizeEmailHtml(once);
        expect(executionVectors(twice)).toEqual([]);
        expect(sanitizeEmailHtml(twice)).toBe(twice);
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 20) * 20 },
    );
  });
});

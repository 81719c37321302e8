import { describe, expect, it } from "vitest";
import { addFooterAndPixel, decodeAttribute, rewriteLinks, trackableUrl } from "../../../src/capabilities/tracking/decorate.ts";

const tracked = (link: { linkId: string }) => `https://t.example/t/c/${link.linkId}`;

describe("rewriting a copy", () => {
  it("rewrites http(s) hrefs of <a> and <area> with character references decoded; leaves other schemes, anchors and plain text alone", () => {
    const html = `<a href="https://a.example/x?y=1&amp;z=2">A</a> <A HREF='http://b.example/'>B</A> <area href=https://c.example/map>
<a href="mailto:x@y.example">m</a> <a href="tel:+1">t</a> <a href="#s">s</a> <a href="javascript:alert(1)">j</a> <p>https://not-a-link.example in html text</p>`;
    const { html: out, links } = rewriteLinks(html, "", tracked);
    expect(links.map((l) => l.url)).toEqual(["https://a.example/x?y=1&z=2", "http://b.example/", "https://c.example/map"]);
    for (const link of links) expect(out.toLowerCase()).toContain(`href="https://t.example/t/c/${link.linkId}"`);
    expect(out).toContain('href="mailto:x@y.example"');
    expect(out).toContain('href="tel:+1"');
    expect(out).toContain('href="#s"');
    expect(out).toContain('href="javascript:alert(1)"');
    expect(out).toContain("https://not-a-link.example in html text");
  });

  it("rewrites text URLs without their trailing punctuation, one link per distinct URL", () => {
    const { text, links } = rewriteLinks("", "See https://a.example/x. Or (https://a.example/x), or https://b.example/?q=1!", tracked);
    expect(links.map((l) => l.url)).toEqual(["https://a.example/x", "https://b.example/?q=1"]);
    expect(text).toMatch(/^See https:\/\/t\.example\/t\/c\/[0-9a-f]{16}\. Or \(https:\/\/t\.example\/t\/c\/[0-9a-f]{16}\), or https:\/\/t\.example\/t\/c\/[0-9a-f]{16}!$/);
  });

  it("adds the footer before </body> in the copy's language, the honeypot and pixel only when asked", () => {
    const parts = addFooterAndPixel("<html><body><p>Hi</p></body></html>", "Hi\n", {
      unsubscribeUrl: "https://t.example/u/tok",
      pixelUrl: "https://t.example/t/o/tok",
      honeypotUrl: "https://t.example/t/c/hp",
      language: "fr-CA",
    });
    expect(parts.html).toMatch(/<p>Hi<\/p>\n<p [^>]*>.*<a href="https:\/\/t\.example\/u\/tok">Se désinscrire<\/a><\/p>\n<a href="https:\/\/t\.example\/t\/c\/hp"[^>]*aria-hidden="true" tabindex="-1"><\/a>\n<img src="https:\/\/t\.example\/t\/o\/tok" width="1" height="1" alt=""[^>]*><\/body><\/html>$/);
    expect(parts.text).toBe("Hi\n\n--\nVous recevez cet e-mail car vous vous êtes inscrit.\nSe désinscrire: https://t.example/u/tok\n");
    const plain = addFooterAndPixel("<p>Hi</p>", "", { unsubscribeUrl: "https://t.example/u/tok", pixelUrl: undefined, honeypotUrl: undefined, language: undefined });
    expect(plain.html).not.toContain("<img");
    expect(plain.html).not.toContain("/t/c/");
    expect(plain.html).toContain(">Unsubscribe</a>");
  });

  it("reads only absolute http(s) URLs", () => {
    expect(trackableUrl(" https://a.example ")).toBe("https://a.example/");
    expect(trackableUrl("//a.example/")).toBeUndefined();
    expect(trackableUrl("https://")).toBeUndefined();
    expect(decodeAttribute("a&amp;b&#38;c&#x26;d&bogus;")).toBe("a&b&c&d&bogus;");
  });
});

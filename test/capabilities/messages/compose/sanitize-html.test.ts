import { describe, expect, it } from "vitest";
import { SAFE_CSS_VALUE, sanitizeEmailHtml } from "../../../../src/capabilities/messages/compose/sanitize-html.ts";

const RECEIPT = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Your receipt</title>
<style>.btn { color: red }</style>
</head>
<body bgcolor="#f4f4f4" style="margin:0;padding:0;">
<center>
<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" align="center" bgcolor="#ffffff" style="border-collapse:collapse;max-width:600px;">
  <tr>
    <td align="center" valign="top" style="padding:24px 16px 8px 16px;">
      <a href="https://shop.example.com/?utm_source=receipt&amp;utm_medium=email" target="_blank"><img src="https://cdn.example.com/logo.png" alt="Example Shop" width="120" height="40" border="0" style="display:block;width:120px;height:auto;"></a>
    </td>
  </tr>
  <tr>
    <td class="content" style="font-family:Arial, 'Helvetica Neue', sans-serif;font-size:16px;line-height:1.5;color:#333333;padding:0 16px;">
      <h1 style="font-size:22px;margin:0 0 12px 0;">Thanks for your order, Ana!</h1>
      <p>Order <strong>#A-1001</strong> &middot; 3 items</p>
      <table width="100%" cellpadding="8" cellspacing="0" border="0">
        <thead><tr><th align="left" style="border-bottom:1px solid #dddddd;">Item</th><th align="right">Price</th></tr></thead>
        <tbody>
          <tr><td>Coffee beans</td><td align="right" nowrap>€ 12.90</td></tr>
          <tr><td colspan="2" bgcolor="#fafafa" style="background-color:#fafafa;text-align:right;font-weight:bold;">Total € 12.90</td></tr>
        </tbody>
      </table>
      <p><a href="https://shop.example.com/orders/A-1001" style="background-color:#0b5fff;color:#ffffff;padding:10px 18px;border-radius:4px;text-decoration:none;display:inline-block;">View your order</a></p>
      <p style="font-size:12px;color:#888888;">Questions? <a href="mailto:support@shop.example.com">support@shop.example.com</a> or <a href="tel:+4930123456">+49 30 123456</a></p>
      <font color="#999999" face="Arial" size="2">Example Shop GmbH</font>
    </td>
  </tr>
</table>
</center>
</body>
</html>`;

describe("sanitizeEmailHtml: keeps ordinary email HTML", () => {
  const out = sanitizeEmailHtml(RECEIPT);

  it("keeps the document structure and the visible text", () => {
    expect(out).toContain('<html lang="en">');
    expect(out).toContain("<title>Your receipt</title>");
    expect(out).toContain("Thanks for your order, Ana!");
    expect(out).toContain("<strong>#A-1001</strong>");
    expect(out).toContain("Total € 12.90");
  });

  it("keeps table layout attributes", () => {
    expect(out).toContain(
      '<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" align="center" bgcolor="#ffffff" style="border-collapse:collapse;max-width:600px">',
    );
    expect(out).toContain('<td align="center" valign="top" style="padding:24px 16px 8px 16px">');
    expect(out).toContain('<td align="right" nowrap>');
    expect(out).toContain('<td colspan="2" bgcolor="#fafafa" style="background-color:#fafafa;text-align:right;font-weight:bold">');
    expect(out).toContain('<th align="left" style="border-bottom:1px solid #dddddd">');
    expect(out).toContain('<body bgcolor="#f4f4f4" style="margin:0;padding:0">');
  });

  it("keeps images with https src and their attributes", () => {
    expect(out).toContain(
      '<img src="https://cdn.example.com/logo.png" alt="Example Shop" width="120" height="40" border="0" style="display:block;width:120px;height:auto" />',
    );
  });

  it("keeps http(s), mailto and tel links", () => {
    expect(out).toContain('<a href="https://shop.example.com/?utm_source=receipt&amp;utm_medium=email" target="_blank">');
    expect(out).toContain(
      '<a href="https://shop.example.com/orders/A-1001" style="background-color:#0b5fff;color:#ffffff;padding:10px 18px;border-radius:4px;text-decoration:none;display:inline-block">',
    );
    expect(out).toContain('<a href="mailto:support@shop.example.com">');
    expect(out).toContain('<a href="tel:+4930123456">');
  });

  it("keeps typography styles, classes and font tags", () => {
    expect(out).toContain(
      `<td class="content" style="font-family:Arial, 'Helvetica Neue', sans-serif;font-size:16px;line-height:1.5;color:#333333;padding:0 16px">`,
    );
    expect(out).toContain('<font color="#999999" face="Arial" size="2">');
  });

  it("drops <style> blocks with their content, and <meta>", () => {
    expect(out).not.toContain("<style");
    expect(out).not.toContain(".btn");
    expect(out).not.toContain("<meta");
  });
});

describe("sanitizeEmailHtml: removes unsafe content", () => {
  it("removes <script> with its content", () => {
    const out = sanitizeEmailHtml("<p>a</p><script>alert(1)</script><SCRIPT src=x></SCRIPT><p>b</p>");
    expect(out).toBe("<p>a</p><p>b</p>");
  });

  it("removes event handler attributes", () => {
    expect(sanitizeEmailHtml('<p onclick="alert(1)" ONMOUSEOVER="x()">hi</p>')).toBe("<p>hi</p>");
    expect(sanitizeEmailHtml('<img src="https://x.example/a.png" onerror="alert(1)">')).toBe(
      '<img src="https://x.example/a.png" />',
    );
    expect(sanitizeEmailHtml('<body onload="alert(1)">x</body>')).toBe("<body>x</body>");
  });

  it.each([
    ["plain", '<a href="javascript:alert(1)">x</a>'],
    ["mixed case", '<a href="JaVaScRiPt:alert(1)">x</a>'],
    ["leading space", '<a href="  javascript:alert(1)">x</a>'],
    ["tab entity", '<a href="jav&#x09;ascript:alert(1)">x</a>'],
    ["newline entity", '<a href="jav&#10;ascript:alert(1)">x</a>'],
    ["decimal entities", '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>'],
    ["named colon entity", '<a href="javascript&colon;alert(1)">x</a>'],
    ["vbscript", '<a href="vbscript:msgbox(1)">x</a>'],
    ["data: link", '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>'],
    ["protocol-relative", '<a href="//evil.example/">x</a>'],
  ])("removes unsafe hrefs: %s", (_label, html) => {
    expect(sanitizeEmailHtml(html)).toBe("<a>x</a>");
  });

  it("removes <iframe>, <object>, <embed>, forms, <base> and <link>", () => {
    const out = sanitizeEmailHtml(
      '<iframe src="https://evil.example">fallback</iframe><object data="x.swf"></object><embed src="x.swf">' +
        '<form action="https://evil.example"><input name="pw"><button>Go</button></form>' +
        '<base href="https://evil.example/"><link rel="stylesheet" href="https://evil.example/x.css"><p>ok</p>',
    );
    expect(out).toBe("Go<p>ok</p>");
  });

  it("removes meta refresh", () => {
    const out = sanitizeEmailHtml(
      '<head><meta http-equiv="refresh" content="0;url=javascript:alert(1)"><meta http-equiv="refresh" content="0;url=https://evil.example"></head>',
    );
    expect(out).toBe("<head></head>");
  });

  it("only allows http, https, cid and raster data: images", () => {
    expect(sanitizeEmailHtml('<img src="cid:logo@shop">')).toBe('<img src="cid:logo@shop" />');
    expect(sanitizeEmailHtml('<img src="data:image/png;base64,iVBORw0KGgo=">')).toBe(
      '<img src="data:image/png;base64,iVBORw0KGgo=" />',
    );
    expect(sanitizeEmailHtml('<img src="data:image/svg+xml;base64,PHN2Zz4=">')).toBe("<img />");
    expect(sanitizeEmailHtml('<img src="da&#x09;ta:text/html,<script>alert(1)</script>">')).toBe("<img />");
    expect(sanitizeEmailHtml('<img src="javascript:alert(1)">')).toBe("<img />");
  });

  it("scheme-checks background attributes", () => {
    expect(sanitizeEmailHtml('<table background="javascript:alert(1)"><tr><td background="https://x.example/bg.png">x</td></tr></table>')).toBe(
      '<table><tr><td background="https://x.example/bg.png">x</td></tr></table>',
    );
  });

  it("filters inline styles to safe properties and values", () => {
    const out = sanitizeEmailHtml(
      '<div style="color:red;background:url(javascript:alert(1));width:expression(alert(1));' +
        'background-image:url(https://x.example/t.gif);behavior:url(x.htc);-moz-binding:url(x.xml#x);' +
        'position:fixed;font-family:e\\78 pression(1);padding:4px">x</div>',
    );
    expect(out).toBe('<div style="color:red;padding:4px">x</div>');
  });

  it("drops styles that are entirely unsafe", () => {
    expect(sanitizeEmailHtml('<p style="width:expression(alert(1))">x</p>')).toBe("<p>x</p>");
  });

  it("removes comments, including Outlook conditional comments", () => {
    expect(sanitizeEmailHtml("<p>a</p><!--[if mso]><p>mso</p><![endif]--><!-- note -->")).toBe("<p>a</p>");
  });

  it("escapes text so that nothing re-forms into markup", () => {
    expect(sanitizeEmailHtml("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>")).toBe("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
    expect(sanitizeEmailHtml("<svg><script>alert(1)</script></svg>")).toBe("");
  });
});

describe("SAFE_CSS_VALUE", () => {
  it.each([
    "red",
    "#fff",
    "#0b5fff",
    "0 0 10px 0",
    "100%",
    "1px solid #dddddd",
    "bold 12px/1.5 Arial, sans-serif",
    "'Segoe UI', \"Helvetica Neue\", sans-serif",
    "rgba(0, 0, 0, 0.5)",
    "hsl(120 50% 50% / 0.3)",
    "-0.5em",
    "inline-block",
  ])("accepts %s", (value) => {
    expect(SAFE_CSS_VALUE.test(value)).toBe(true);
  });

  it.each([
    "url(https://x.example/a.png)",
    "url(javascript:alert(1))",
    "expression(alert(1))",
    "e\\78 pression(1)",
    "red;position:fixed",
    "javascript:alert(1)",
    "calc(1px + var(--x))",
    "red /* comment */",
    "",
  ])("rejects %s", (value) => {
    expect(SAFE_CSS_VALUE.test(value)).toBe(false);
  });
});

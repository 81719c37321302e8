import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../../src/contract/api-error.ts";
import { renderMessageContent, renderTemplate, templateVariableNames } from "../../../../src/capabilities/messages/compose/template.ts";

describe("renderTemplate: substitution", () => {
  it("replaces variables with or without whitespace inside the braces", () => {
    expect(renderTemplate("Hi {{ name }}, {{name}}, {{   name\t}}!", { name: "Ana" }, "text")).toBe("Hi Ana, Ana, Ana!");
  });

  it("accepts letters, digits, _, . and - in names (flat keys)", () => {
    const vars = { order_id: "A1", "order.total": "9.90", "first-name": "Ana", x2: "y" };
    expect(renderTemplate("{{order_id}} {{ order.total }} {{first-name}} {{x2}}", vars, "text")).toBe("A1 9.90 Ana y");
  });

  it("renders numbers and booleans with String()", () => {
    expect(renderTemplate("{{n}} {{f}} {{t}} {{no}} {{zero}}", { n: 12.5, f: -3, t: true, no: false, zero: 0 }, "text")).toBe(
      "12.5 -3 true false 0",
    );
  });

  it("renders a missing variable (absent or null) without fallback as the empty string", () => {
    expect(renderTemplate("Hi {{ name }}!", {}, "text")).toBe("Hi !");
    expect(renderTemplate("Hi {{ name }}!", { name: null }, "html")).toBe("Hi !");
  });

  it("does not look up inherited properties", () => {
    expect(renderTemplate("[{{ constructor }}][{{ toString }}][{{ __proto__ }}]", {}, "text")).toBe("[][][]");
  });

  it("inserts values once: {{ in a value is not rendered again", () => {
    expect(renderTemplate("{{ a }}", { a: "{{ b }}", b: "no" }, "text")).toBe("{{ b }}");
  });
});

describe("renderTemplate: fallbacks", () => {
  it("uses the fallback for absent, null or empty values", () => {
    const source = "Hi {{ name | default:there }}!";
    expect(renderTemplate(source, {}, "text")).toBe("Hi there!");
    expect(renderTemplate(source, { name: null }, "text")).toBe("Hi there!");
    expect(renderTemplate(source, { name: "" }, "text")).toBe("Hi there!");
    expect(renderTemplate(source, { name: "Ana" }, "text")).toBe("Hi Ana!");
  });

  it("keeps real false and 0 values", () => {
    expect(renderTemplate("{{ n | default:none }} {{ b | default:none }}", { n: 0, b: false }, "text")).toBe("0 false");
  });

  it("allows optional whitespace around the tokens and trims an unquoted fallback", () => {
    expect(renderTemplate("[{{x|default:dear customer}}]", {}, "text")).toBe("[dear customer]");
    expect(renderTemplate("[{{ x  |  default :  dear customer  }}]", {}, "text")).toBe("[dear customer]");
    expect(renderTemplate("[{{ x | default: }}]", {}, "text")).toBe("[]");
  });

  it("takes quoted fallbacks verbatim, including } and |", () => {
    expect(renderTemplate(`[{{ x | default:"a } | b" }}]`, {}, "text")).toBe("[a } | b]");
    expect(renderTemplate(`[{{ x | default:'  spaced  ' }}]`, {}, "text")).toBe("[  spaced  ]");
    expect(renderTemplate(`[{{ x | default:"it's" }}]`, {}, "text")).toBe("[it's]");
  });

  it("takes an unclosed quote as part of an unquoted fallback", () => {
    expect(renderTemplate(`[{{ x | default:"open }}]`, {}, "text")).toBe(`["open]`);
  });

  it("escapes the fallback in HTML like any value", () => {
    expect(renderTemplate(`{{ x | default:"<b>Tom & Jerry</b>" }}`, {}, "html")).toBe("&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;");
  });
});

describe("renderTemplate: contexts", () => {
  it("HTML-escapes values in the html context", () => {
    expect(renderTemplate("<p>{{ x }}</p>", { x: "<script>alert(1)</script>" }, "html")).toBe(
      "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>",
    );
    expect(renderTemplate(`<a title="{{ x }}">`, { x: `" onmouseover="alert(1)` }, "html")).toBe(
      `<a title="&quot; onmouseover=&quot;alert(1)">`,
    );
    expect(renderTemplate("{{ x }}", { x: `&<>"'` }, "html")).toBe("&amp;&lt;&gt;&quot;&#39;");
  });

  it("inserts raw text in the text and subject contexts", () => {
    expect(renderTemplate("{{ x }}", { x: "<b>&</b>" }, "text")).toBe("<b>&</b>");
    expect(renderTemplate("{{ x }}", { x: "<b>&</b>" }, "subject")).toBe("<b>&</b>");
  });

  it("keeps line breaks in text but never in the subject", () => {
    expect(renderTemplate("{{ x }}", { x: "a\nb" }, "text")).toBe("a\nb");
    expect(renderTemplate("Order {{ x }}", { x: "1\r\nBcc: x@evil.example" }, "subject")).toBe("Order 1 Bcc: x@evil.example");
    expect(renderTemplate("Line\none {{ x | default:'a\nb' }}", {}, "subject")).toBe("Line one a b");
  });

  it("treats {{{ }}} as text around an escaped value (no raw insertion)", () => {
    expect(renderTemplate("{{{ x }}}", { x: "<i>" }, "html")).toBe("{&lt;i&gt;}");
  });
});

describe("renderTemplate: malformed sequences are left as they are", () => {
  it.each([
    "{{ }}",
    "{{ name",
    "{{ na me }}",
    "{{ name | upper }}",
    "{{ name | default }}",
    "{{ name | default:a | default:b }}",
    "{ name }",
    "{{ <b> }}",
    "{{",
  ])("%s", (source) => {
    expect(renderTemplate(source, { name: "Ana" }, "html")).toBe(source);
  });

  it("renders the valid placeholders next to malformed ones", () => {
    expect(renderTemplate("{{ x | nope }} {{ x }}", { x: "1" }, "text")).toBe("{{ x | nope }} 1");
  });

  it("stays fast on hostile input of maximal size", () => {
    const hostile = [
      `{{a|default:${" ".repeat(200_000)}|`,
      `{{a|default:${"x".repeat(400_000)}`,
      `{{a|default:"`.repeat(30_000),
      "{{".repeat(200_000),
      "{{ a ".repeat(80_000),
    ];
    const started = performance.now();
    for (const source of hostile) expect(renderTemplate(source, {}, "html")).toBe(source);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("renderMessageContent", () => {
  it("renders each part in its own context", () => {
    const out = renderMessageContent(
      {
        subject: "Receipt for {{ name }}\n",
        html: "<p>Hello {{ name | default:friend }}, total {{ total }}</p>",
        text: "Hello {{ name }}, total {{ total }}",
      },
      { name: "<Ana>", total: 9.9 },
    );
    expect(out).toEqual({
      subject: "Receipt for <Ana> ",
      html: "<p>Hello &lt;Ana&gt;, total 9.9</p>",
      text: "Hello <Ana>, total 9.9",
    });
  });

  it("leaves text out when there is none", () => {
    const out = renderMessageContent({ subject: "s", html: "{{x}}" }, {});
    expect(out).toEqual({ subject: "s", html: "" });
    expect(out).not.toHaveProperty("text");
  });

  it("takes the parts sent alongside the template as they are, without rendering them", () => {
    const template = { subject: "Hi {{ name }}", html: "<p>{{ name }}</p>", text: "{{ name }}" };
    expect(renderMessageContent(template, { name: "Ana" }, { subject: "Mine {{ name }}" })).toEqual({
      subject: "Mine {{ name }}",
      html: "<p>Ana</p>",
      text: "Ana",
    });
    expect(renderMessageContent(template, { name: "Ana" }, { html: "<b>x</b>", text: "plain" })).toEqual({
      subject: "Hi Ana",
      html: "<b>x</b>",
      text: "plain",
    });
  });
});

describe("renderMessageContent: limits of the rendered parts", () => {
  /** The field problems of a render expected to fail. */
  function refused(render: () => unknown): { field: string; problem: string }[] {
    try {
      render();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      return [...(error as ValidationError).fields];
    }
    throw new Error("expected a ValidationError");
  }

  it("refuses a subject that renders longer than 500 characters, naming the field", () => {
    const template = { subject: "Hi {{ name }}", html: "<p>x</p>" };
    expect(renderMessageContent(template, { name: "a".repeat(497) }).subject).toHaveLength(500);
    expect(refused(() => renderMessageContent(template, { name: "a".repeat(498) }))).toEqual([
      { field: "subject", problem: "rendered template is longer than 500 characters" },
    ]);
    // 1.9 MB of variable once gave a 1.9 MB subject.
    expect(refused(() => renderMessageContent(template, { name: "a".repeat(1_900_000) }))).toEqual([
      { field: "subject", problem: "rendered template is longer than 500 characters" },
    ]);
  });

  it("counts code points, and the subject after its line breaks are joined", () => {
    expect(renderMessageContent({ subject: "{{ x }}", html: "h" }, { x: "😀".repeat(500) }).subject).toBe("😀".repeat(500));
    expect(renderMessageContent({ subject: "a{{ x }}b", html: "h" }, { x: "\r\n".repeat(5_000) }).subject).toBe("a b");
  });

  it("refuses html over 400,000 and text over 100,000 characters once rendered", () => {
    const many = "{{ v }}".repeat(50);
    const value = "x".repeat(8_001); // 50 x 8,001 = 400,050
    expect(refused(() => renderMessageContent({ subject: "s", html: many }, { v: value }))).toEqual([
      { field: "html", problem: "rendered template is longer than 400000 characters" },
    ]);
    expect(refused(() => renderMessageContent({ subject: "s", html: "h", text: many.slice(0, 7 * 13) }, { v: value }))).toEqual([
      { field: "text", problem: "rendered template is longer than 100000 characters" },
    ]);
    // Escaping counts: the html limit is on what would be sent (20 x 4,000 x "&amp;" = 400,000; 20 x 4,001 is over).
    expect(renderMessageContent({ subject: "s", html: "{{ v }}".repeat(20) }, { v: "&".repeat(4_000) }).html).toHaveLength(400_000);
    expect(refused(() => renderMessageContent({ subject: "s", html: "{{ v }}".repeat(20) }, { v: "&".repeat(4_001) }))).toEqual([
      { field: "html", problem: "rendered template is longer than 400000 characters" },
    ]);
  });

  it("stops rendering a part once it is certainly over its limit, whatever the template repeats", () => {
    // 80,000 placeholders of a 10,000-character value would be 800 million characters.
    const html = "{{v}}".repeat(80_000);
    expect(refused(() => renderMessageContent({ subject: "s", html }, { v: "x".repeat(10_000) }))).toEqual([
      { field: "html", problem: "rendered template is longer than 400000 characters" },
    ]);
  });

  it("does not hold replaced parts to the rendered limits (they were checked as sent)", () => {
    const template = { subject: "Hi {{ name }}", html: "<p>{{ name }}</p>" };
    expect(renderMessageContent(template, { name: "a".repeat(600) }, { subject: "Welcome" })).toEqual({
      subject: "Welcome",
      html: `<p>${"a".repeat(600)}</p>`,
    });
  });
});

describe("templateVariableNames: the variables a template uses", () => {
  it("lists each name once, in order of first use across the parts, fallbacks or not", () => {
    expect(templateVariableNames("Order {{ order.id }}", "<p>{{name|default:there}} {{ order.id }}</p>", "{{ coupon | default:'a|b' }} {{name}}")).toEqual([
      "order.id",
      "name",
      "coupon",
    ]);
  });

  it("leaves out what rendering leaves alone (bad names, unknown filters, an unclosed brace)", () => {
    expect(templateVariableNames("{{ bad name }} {{ x | upper }} {{ open", "{{}}", "")).toEqual([]);
    // The same placeholders renderTemplate fills.
    const source = "{{ a }} {{ b | default:\"}\" }} {{ c d }}";
    expect(templateVariableNames(source)).toEqual(["a", "b"]);
    expect(renderTemplate(source, { a: "1", b: "2" }, "text")).toBe("1 2 {{ c d }}");
  });
});

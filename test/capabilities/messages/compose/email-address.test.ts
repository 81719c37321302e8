import { describe, expect, it } from "vitest";
import { checkEmailAddress, isEmailAddress } from "../../../../src/capabilities/messages/compose/email-address.ts";

describe("checkEmailAddress", () => {
  it.each([
    ["a@example.com", "a@example.com"],
    ["first.last+tag@sub.example.co.uk", "first.last+tag@sub.example.co.uk"],
    ["o'brien@example.ie", "o'brien@example.ie"],
    ["x_y-z!#$%&*/=?^`{|}~@example.org", "x_y-z!#$%&*/=?^`{|}~@example.org"],
    ["User@EXAMPLE.COM", "User@example.com"],
    ["user@xn--bcher-kva.example", "user@xn--bcher-kva.example"],
    ["user@Bücher.example", "user@xn--bcher-kva.example"],
    ["a@123.example.com", "a@123.example.com"],
    [`${"l".repeat(64)}@example.com`, `${"l".repeat(64)}@example.com`],
  ])("accepts %s", (input, normalised) => {
    expect(checkEmailAddress(input)).toEqual({ ok: true, address: normalised });
  });

  it.each([
    ["empty", ""],
    ["no @", "plainaddress"],
    ["two @", "a@b@example.com"],
    ["nothing before @", "@example.com"],
    ["nothing after @", "a@"],
    ["dotless domain", "a@localhost"],
    ["space inside", "a b@example.com"],
    ["leading space", " a@example.com"],
    ["trailing newline", "a@example.com\n"],
    ["CRLF header injection", "a@example.com\r\nBcc: x@evil.example"],
    ["NUL", "a\u0000@example.com"],
    ["no-break space", "a\u00a0@example.com"],
    ["leading dot", ".a@example.com"],
    ["trailing dot in local part", "a.@example.com"],
    ["double dot in local part", "a..b@example.com"],
    ["quoted local part", '"a b"@example.com'],
    ["comma", "a,b@example.com"],
    ["angle brackets", "<a@example.com>"],
    ["display-name form", "Ana <a@example.com>"],
    ["label starting with hyphen", "a@-example.com"],
    ["label ending with hyphen", "a@example-.com"],
    ["underscore in domain", "a@exa_mple.com"],
    ["empty label", "a@example..com"],
    ["trailing dot in domain", "a@example.com."],
    ["IPv4 domain", "a@192.0.2.1"],
    ["address literal", "a@[192.0.2.1]"],
    ["local part over 64", `${"l".repeat(65)}@example.com`],
    ["label over 63", `a@${"d".repeat(64)}.com`],
    ["address over 254", `a@${Array.from({ length: 5 }, () => "d".repeat(60)).join(".")}.com`],
    ["non-ASCII local part", "ü@example.com"],
    ["full-width domain (IDNA would map it)", "a@ｅｘａｍｐｌｅ.com"],
    ["zero-width space in domain", "a@exa\u200bmple.com"],
  ])("rejects %s", (_label, input) => {
    const result = checkEmailAddress(input);
    expect(result.ok).toBe(false);
    expect(isEmailAddress(input)).toBe(false);
  });

  it("explains what is wrong", () => {
    expect(checkEmailAddress(`${"l".repeat(65)}@example.com`)).toEqual({
      ok: false,
      problem: "must be a valid email address (more than 64 characters before @)",
    });
  });
});

import { describe, expect, it } from "vitest";
import { parseInboundReport } from "../../../src/adapters/email/report-parser.ts";
import { arf, autoReply, dsn } from "../../delivery-loop/reports.ts";

/** The MIME reader of inbound reports (mailparser), on reports as mail systems write them. */
describe("parseInboundReport", () => {
  it("reads an RFC 3464 DSN: each recipient's action, status and diagnostic, and the original Message-ID", async () => {
    const parsed = await parseInboundReport(
      Buffer.from(dsn({ to: "b-x@bounces.shop.test", recipient: "gone@customer.test", action: "failed", status: "5.1.1", originalMessageId: "abc@mail.test" })),
    );
    expect(parsed.report).toEqual({
      kind: "dsn",
      recipients: [{ action: "failed", status: "5.1.1", finalRecipient: "rfc822; gone@customer.test", diagnostic: "smtp; 550 5.1.1 mailbox unavailable" }],
      originalMessageId: "<abc@mail.test>",
    });
    expect(parsed.summary.subject).toBe("Undelivered Mail Returned to Sender");
    expect(parsed.summary.excerpt).toContain("could not be delivered");
  });

  it("reads an RFC 5965 feedback report and the Message-ID of the enclosed message", async () => {
    const parsed = await parseInboundReport(Buffer.from(arf({ to: "b-x@bounces.shop.test", originalMessageId: "abc@mail.test" })));
    expect(parsed.report).toEqual({ kind: "feedback", feedbackType: "abuse", originalMessageId: "<abc@mail.test>" });
  });

  it("anything else is `other`, with what an operator needs to recognise it", async () => {
    const parsed = await parseInboundReport(Buffer.from(autoReply("b-x@bounces.shop.test")));
    expect(parsed.report.kind).toBe("other");
    expect(parsed.summary).toMatchObject({ subject: "Out of office: Your receipt", excerpt: expect.stringContaining("away until Monday") as string });
  });

  it("a report without its status part, or garbage, is `other`", async () => {
    const broken = dsn({ to: "x", recipient: "y", action: "failed", status: "5.1.1", originalMessageId: "z@m" }).replace("message/delivery-status", "text/plain");
    expect((await parseInboundReport(Buffer.from(broken))).report.kind).toBe("other");
    expect((await parseInboundReport(Buffer.from("\u0000\u0001 not mail at all"))).report.kind).toBe("other");
  });
});

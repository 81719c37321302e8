/** Reports as mail systems write them (RFC 3464 DSN, RFC 5965 ARF, an auto-reply), for tests. */

export function dsn(options: { to: string; recipient: string; action: string; status: string; originalMessageId: string }): string {
  return [
    "From: MAILER-DAEMON@mx.customer.test (Mail Delivery System)",
    `To: ${options.to}`,
    "Subject: Undelivered Mail Returned to Sender",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"',
    "",
    "--dsn-boundary",
    "Content-Type: text/plain; charset=us-ascii",
    "",
    "This is the mail system. Your message could not be delivered.",
    "",
    "--dsn-boundary",
    "Content-Type: message/delivery-status",
    "",
    "Reporting-MTA: dns; mx.customer.test",
    "",
    `Final-Recipient: rfc822; ${options.recipient}`,
    `Action: ${options.action}`,
    `Status: ${options.status}`,
    `Diagnostic-Code: smtp; 550 ${options.status} mailbox unavailable`,
    "",
    "--dsn-boundary",
    "Content-Type: text/rfc822-headers",
    "",
    `Message-ID: <${options.originalMessageId}>`,
    "Subject: Your receipt",
    "",
    "--dsn-boundary--",
    "",
  ].join("\r\n");
}

export function arf(options: { to: string; originalMessageId: string; feedbackType?: string }): string {
  return [
    "From: fbl@isp.test",
    `To: ${options.to}`,
    "Subject: FW: Your receipt",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=feedback-report; boundary="arf-boundary"',
    "",
    "--arf-boundary",
    "Content-Type: text/plain; charset=us-ascii",
    "",
    "This is an email abuse report for an email message received from IP 192.0.2.1.",
    "",
    "--arf-boundary",
    "Content-Type: message/feedback-report",
    "",
    `Feedback-Type: ${options.feedbackType ?? "abuse"}`,
    "User-Agent: SomeISP-FBL/1.0",
    "Version: 1",
    "",
    "--arf-boundary",
    "Content-Type: message/rfc822",
    "Content-Disposition: inline",
    "",
    "From: receipts@shop.test",
    "To: someone@customer.test",
    "Subject: Your receipt",
    `Message-ID: <${options.originalMessageId}>`,
    "",
    "Thanks for your order.",
    "",
    "--arf-boundary--",
    "",
  ].join("\r\n");
}

export function autoReply(to: string): string {
  return [
    "From: Ada <ok-ada@customer.test>",
    `To: ${to}`,
    "Subject: Out of office: Your receipt",
    "Auto-Submitted: auto-replied",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "I am away until Monday.",
    "",
  ].join("\r\n");
}

/** The sign-in email: the link, for whom, until when. Plain and short; the link is the only action. */
export interface SignInEmail {
  readonly subject: string;
  readonly html: string;
  readonly text: string;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderSignInEmail(input: { companyName: string; url: string; expiresAt: Date }): SignInEmail {
  const company = input.companyName || "your company";
  const until = input.expiresAt.toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    subject: `Sign in to ${company}'s mail administration`,
    text: `Use this link to sign in to ${company}'s mail administration. It works once, until ${until}:\n\n${input.url}\n\nIf you did not expect this email, ignore it.\n`,
    html:
      `<p>Use this link to sign in to ${escapeHtml(company)}'s mail administration. It works once, until ${until}.</p>` +
      `<p><a href="${escapeHtml(input.url)}">Sign in</a></p><p>If you did not expect this email, ignore it.</p>`,
  };
}

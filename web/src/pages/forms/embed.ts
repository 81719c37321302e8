import type { Form } from "@gen/mail/v1/mail_pb.js";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The HTML a company puts on its own site for a form: a plain <form> whose
 * button opens the hosted page. The hosted page cannot be framed (it sends
 * `frame-ancestors 'none'`) and each sign-up carries a one-time token the
 * page itself issues, so a form posting the fields from another site would
 * be refused; opening the page is what the hosted form supports.
 */
export function embedSnippet(form: Pick<Form, "url">): string {
  return [`<form action="${escapeHtml(form.url)}" method="get">`, `  <button type="submit">Sign up</button>`, `</form>`].join("\n");
}

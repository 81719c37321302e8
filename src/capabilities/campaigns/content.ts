import { sanitizeEmailHtml } from "../messages/compose/sanitize-html.ts";
import { renderMessageContent, renderTemplate, type TemplateVariables } from "../messages/compose/template.ts";
import type { CampaignDraft, CampaignTemplate } from "./ports.ts";

export interface CampaignContent {
  readonly subject: string;
  /** Sanitised as a send's. */
  readonly html: string | null;
  readonly text: string | null;
}

/**
 * One recipient's copy of a campaign's content: the template (or the
 * campaign's own subject and bodies) rendered with the contact's values,
 * HTML-escaped, then sanitised, as for a send (compose/).
 */
export function renderCampaignContent(campaign: CampaignDraft, template: CampaignTemplate | undefined, variables: TemplateVariables): CampaignContent {
  if (template) {
    const rendered = renderMessageContent({ subject: template.subject, html: template.html, ...(template.text ? { text: template.text } : {}) }, variables);
    return { subject: rendered.subject, html: sanitizeEmailHtml(rendered.html), text: rendered.text ?? null };
  }
  return {
    subject: renderTemplate(campaign.subject ?? "", variables, "subject"),
    html: campaign.html === null ? null : sanitizeEmailHtml(renderTemplate(campaign.html, variables, "html")),
    text: campaign.text === null ? null : renderTemplate(campaign.text, variables, "text"),
  };
}

import type { AuditContext } from "../audit/types.ts";
import { ApiError } from "../../contract/api-error.ts";
import { validVariables } from "../messages/compose/validate-send.ts";
import type { JsonObject } from "../shared/json.ts";
import type { TemplateStore } from "./ports.ts";
import type { Templates } from "./templates.ts";

/** One test send as the send path takes it: the stored template, the sample variables, the member's address. */
export interface TemplateTestMail {
  readonly companyId: string;
  readonly memberId: string;
  readonly to: string;
  readonly templateId: string;
  readonly variables: JsonObject;
}

/** The send path (the messages capability's MessageAcceptance, with a `member` origin). */
export interface TemplateTestMailer {
  send(mail: TemplateTestMail): Promise<{ readonly messageId: string }>;
}

export interface TemplateTestSendsDependencies {
  readonly templates: Pick<Templates, "get">;
  readonly store: Pick<TemplateStore, "noteTestSend">;
  readonly mailer: TemplateTestMailer;
}

/** Who asks: a signed-in member has an address; an API key or an operator has none. */
export type TestSendRequester = { readonly kind: "member"; readonly memberId: string; readonly email: string } | { readonly kind: "other" };

export interface SendTestTemplateCommand {
  readonly companyId: string;
  readonly templateId: string;
  readonly variables?: JsonObject | undefined;
  readonly requester: TestSendRequester;
  readonly audit: AuditContext;
}

export interface TemplateTestSent {
  readonly messageId: string;
  readonly to: string;
}

/**
 * "Send a test": the stored template, rendered with sample variables, to
 * the signed-in member's own address, as a normal message (the send's
 * checks, its credit, the message log, webhooks). The address is never
 * taken from the request, so a test send cannot mail anyone else.
 */
export class TemplateTestSends {
  readonly #deps: TemplateTestSendsDependencies;

  constructor(deps: TemplateTestSendsDependencies) {
    this.#deps = deps;
  }

  async send(command: SendTestTemplateCommand): Promise<TemplateTestSent> {
    const { requester } = command;
    // The request is judged first (400, 404), as a campaign's test copy is; then who may receive it.
    validVariables(command.variables);
    const template = await this.#deps.templates.get({ companyId: command.companyId, templateId: command.templateId });
    if (requester.kind !== "member") {
      throw new ApiError(
        "FORBIDDEN",
        "A test send goes to the signed-in member's own address, and an API key or an operator has none: sign in to the screen, or send with POST /mail/v1/send.",
      );
    }
    const sent = await this.#deps.mailer.send({
      companyId: template.companyId,
      memberId: requester.memberId,
      to: requester.email,
      templateId: template.id,
      variables: command.variables ?? {},
    });
    await this.#deps.store.noteTestSend(template.companyId, template.id, {
      context: command.audit,
      action: "template.test_sent",
      details: { name: template.name, messageId: sent.messageId, to: requester.email },
    });
    return { messageId: sent.messageId, to: requester.email };
  }
}

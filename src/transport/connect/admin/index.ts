import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountsService } from "../../../capabilities/accounts/index.ts";
import type { CreditsService } from "../../../capabilities/credits/index.ts";
import type { SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import type { SuppressionsService } from "../../../capabilities/suppressions/index.ts";
import type { ProviderEventsIntake } from "../../../capabilities/messages/lifecycle/provider-events.ts";
import { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { accountsAdmin } from "./accounts-admin.ts";
import { membersAdmin } from "./members-admin.ts";
import type { MembersService } from "../../../capabilities/members/index.ts";
import { creditsAdmin } from "./credits-admin.ts";
import { sendingAdmin } from "./sending-admin.ts";
import { suppressionsAdmin } from "./suppressions-admin.ts";
import { providerEventsAdmin } from "./provider-events-admin.ts";
import { webhooksAdmin, type WebhooksAdminDeps } from "./webhooks-admin.ts";
import type { SignupForms } from "../../../capabilities/forms/index.ts";
import type { ContactLists } from "../../../capabilities/contacts/index.ts";
import { formsAdmin } from "../forms/forms-admin.ts";
import type { RevenueReport } from "../conversions/index.ts";
import { listsAdmin } from "./lists-admin.ts";
import { reportsAdmin } from "./reports-admin.ts";
import { notImplemented } from "../not-implemented.ts";

/**
 * The AdminService: operators and internal services (token-guarded by the
 * auth interceptor; gRPC/Connect only). One module per capability; this
 * file only puts them together.
 */
export interface AdminDependencies {
  readonly accounts: AccountsService;
  /** Company members: the first owner and sign-in links (src/wiring/members.ts). */
  readonly members: MembersService;
  readonly sendingSetup: SendingSetup;
  readonly credits: CreditsService;
  readonly suppressions: SuppressionsService;
  /** The messages capability's intake of delivery outcomes (src/wiring/messaging.ts builds it). */
  readonly messaging: { readonly providerEvents: ProviderEventsIntake };
  readonly webhooks: WebhooksAdminDeps;
  /** The sign-up forms (src/wiring/forms.ts); until wired, the form RPCs answer NOT_IMPLEMENTED. */
  readonly forms?: SignupForms;
  /** Contact lists (src/wiring/contacts.ts). */
  readonly contactLists: ContactLists;
  /** The revenue report (ConversionsService fits). */
  readonly revenue: RevenueReport;
}

export function adminServiceImpl(deps: AdminDependencies): ServiceImpl<typeof AdminService> {
  /** The company named in a request, which must exist (404 NOT_FOUND otherwise). */
  const company = async (req: { companyId: string }): Promise<string> => (await deps.accounts.getCompany(req.companyId)).id;
  return {
    ...accountsAdmin(deps.accounts),
    ...membersAdmin(deps.members, deps.accounts),
    ...sendingAdmin(deps.sendingSetup),
    ...creditsAdmin(deps.credits),
    ...suppressionsAdmin(deps.suppressions),
    ...providerEventsAdmin(deps.messaging.providerEvents),
    ...webhooksAdmin(deps.webhooks, deps.accounts),
    ...(deps.forms
      ? formsAdmin(deps.forms, company)
      : {
          createSignupForm: notImplemented("CreateSignupForm"),
          deactivateSignupForm: notImplemented("DeactivateSignupForm"),
          listSignupForms: notImplemented("ListSignupForms"),
        }),
    ...listsAdmin(deps.contactLists, company),
    ...reportsAdmin(deps.revenue, company),
  };
}

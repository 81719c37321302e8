import type { ServiceImpl } from "@connectrpc/connect";
import type { Companies } from "../../../capabilities/accounts/index.ts";
import type { Credits } from "../../../capabilities/credits/index.ts";
import type { SendingSetup } from "../../../capabilities/sending-setup/index.ts";
import type { ProviderEventsIntake } from "../../../capabilities/messages/lifecycle/provider-events.ts";
import { AdminService } from "../../../gen/mail/v1/admin_pb.js";
import { accountsAdmin } from "./accounts-admin.ts";
import { membersAdmin } from "./members-admin.ts";
import type { Members } from "../../../capabilities/members/index.ts";
import { creditsAdmin } from "./credits-admin.ts";
import { sendingAdmin } from "./sending-admin.ts";
import { providerEventsAdmin } from "./provider-events-admin.ts";
import type { SendingGuard } from "../../../capabilities/deliverability/index.ts";
import { sendingGuardAdmin } from "./sending-guard-admin.ts";

/**
 * The AdminService: what is the operator's alone (token-guarded by the auth
 * interceptor; gRPC/Connect only). A company's keys, webhooks, lists, forms,
 * templates and reports are not here: operators call the company services
 * on the operator listener with x-mail-company-id (one handler per RPC).
 * One module per capability, one mapping module (mapping.ts); this file
 * only puts them together.
 */
export interface AdminDependencies {
  readonly companies: Companies;
  /** Company members: sign-in links handed over by hand (src/wiring/members.ts). */
  readonly members: Members;
  readonly sendingSetup: SendingSetup;
  readonly credits: Credits;
  /** The messages capability's intake of delivery outcomes (src/wiring/messaging.ts builds it). */
  readonly messaging: { readonly providerEvents: ProviderEventsIntake };
  /** The deliverability guard: operators lift a suspension. */
  readonly sendingGuard: SendingGuard;
}

export function adminServiceImpl(deps: AdminDependencies): ServiceImpl<typeof AdminService> {
  return {
    ...accountsAdmin(deps.companies),
    ...membersAdmin(deps.members, deps.companies),
    ...sendingAdmin(deps.sendingSetup),
    ...creditsAdmin(deps.credits),
    ...providerEventsAdmin(deps.messaging.providerEvents),
    ...sendingGuardAdmin(deps.sendingGuard),
  };
}

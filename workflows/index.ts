// Every capability's workflows: the worker bundles this module and registers
// all of them (src/adapters/temporal/worker.ts). A new capability adds its
// folder here and one export line.
export { messageLifecycle } from "./messages/message-lifecycle.ts";
export { webhookDelivery, retryDelivery } from "./webhooks/delivery.ts";
export { campaignSending } from "./campaigns/campaign-sending.ts";
export { domainChecks } from "./domains/domain-checks.ts";

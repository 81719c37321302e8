export { contactRpcs, type ContactRpcs } from "./contact-rpcs.ts";
export { listsServiceImpl } from "./lists-service.ts";

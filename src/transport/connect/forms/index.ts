export { listFormsRpc, type ListFormsRpc } from "./list-forms.ts";
export { signupFormsServiceImpl } from "./signup-forms-service.ts";
export { toFormProto } from "./forms-to-proto.ts";

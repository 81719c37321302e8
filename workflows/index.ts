// The workflows the worker registers (bundled by the Temporal worker).
export { messageLifecycle, messageStatusChanged } from "./messages/message-lifecycle.ts";

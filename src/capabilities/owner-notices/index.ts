export { type NotifyOwnersCommand, type NotifyOwnersResult, type OwnerNoticeKind, OwnerNotices, type OwnerNoticesDependencies } from "./owner-notices.ts";
export type { OwnerDirectory, SystemMail, SystemMailer } from "./ports.ts";

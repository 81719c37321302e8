export { MESSAGE_LOG_CURSOR, MessageLog, type MessageLogDependencies } from "./message-log.ts";
export {
  type GetMessageCommand,
  isMessageStatus,
  type ListMessagesCommand,
  MESSAGE_STATUSES,
  type MessageContentRecord,
  type MessageEventRecord,
  type MessageRecord,
  type MessageStatusName,
} from "./types.ts";

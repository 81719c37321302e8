export { createMessageReader, type MessageReader, type MessageReaderOptions } from "./message-reader.ts";
export {
  isMessageStatus,
  MESSAGE_STATUSES,
  type ListMessagesOptions,
  type MessageEventRecord,
  type MessagePage,
  type MessageRecord,
  type MessageStatusName,
} from "./types.ts";
export { DEFAULT_LIMIT, MAX_LIMIT } from "./filters.ts";
export { createMessageContentReader, type MessageContentReader, type MessageContentRecord } from "./message-content.ts";

import { type DescEnum, type DescField, getOption } from "@bufbuild/protobuf";
import { MessageStatus, MessageStatusSchema } from "../gen/mail/v1/mail_pb.js";
import { moves_to, wire_enum, wire_name } from "../gen/mail/v1/options_pb.js";
import { WebhookEventSchema } from "../gen/mail/v1/webhooks_pb.js";

/**
 * The contract's enums whose wire form is a string, read from the
 * descriptors once: the webhook events (`wire_name`) and the message
 * statuses with their moves (`moves_to`). The server validates and moves by
 * these; the OpenAPI document lists them; the screen reads the same
 * descriptors. Adding a value to the .proto file is the whole change.
 */

/** A message status as the API writes it: the enum value's name after `MESSAGE_STATUS_`, lower-cased. */
export type MessageStatusName = Lowercase<Exclude<keyof typeof MessageStatus, "UNSPECIFIED">>;

export interface MessageStatusEntry {
  readonly name: MessageStatusName;
  readonly value: MessageStatus;
  /** The statuses a message may move to from this one; none: final. */
  readonly movesTo: readonly MessageStatusName[];
}

const STATUS_PREFIX = "MESSAGE_STATUS_";

/** Every message status of the contract, in its order, with its moves. */
export const MESSAGE_STATUS_TABLE: readonly MessageStatusEntry[] = MessageStatusSchema.values
  .filter((v) => v.number !== MessageStatus.UNSPECIFIED)
  .map((v) => ({
    name: v.name.slice(STATUS_PREFIX.length).toLowerCase() as MessageStatusName,
    value: v.number as MessageStatus,
    movesTo: getOption(v, moves_to) as MessageStatusName[],
  }));

/** The wire names of an enum whose values carry `wire_name` (values without one are skipped). */
export function wireNames(enumDesc: DescEnum): string[] {
  return enumDesc.values.map((v) => getOption(v, wire_name)).filter((name) => name !== "");
}

/** The webhook event names (spec: Event kinds), from `mail.v1.WebhookEvent`. */
export const WEBHOOK_EVENT_NAMES: readonly string[] = wireNames(WebhookEventSchema);

/** The enums that string fields name with `wire_enum`, by full name. */
const WIRE_ENUMS: ReadonlyMap<string, DescEnum> = new Map([[WebhookEventSchema.typeName, WebhookEventSchema]]);

/** The values a string field takes when it names an enum with `wire_enum`; undefined for any other field. */
export function wireEnumValuesOf(field: DescField): readonly string[] | undefined {
  const name = getOption(field, wire_enum);
  if (name === "") return undefined;
  const desc = WIRE_ENUMS.get(name);
  if (!desc) throw new Error(`contract: ${field.parent.typeName}.${field.name} names an unknown wire_enum ${name}`);
  return wireNames(desc);
}

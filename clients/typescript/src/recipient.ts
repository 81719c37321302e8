import { fromJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";

/**
 * A send's `to`: the contract types it as a JSON value (an address string,
 * or `{ email, name }` with a name of at most 120 characters), which
 * protobuf-es represents as a google.protobuf.Value message; this builds it.
 *
 *   client.mail.sendMessage({ to: recipient("ada@example.com", "Ada Lovelace"), ... })
 */
export function recipient(email: string, name?: string): Value {
  return fromJson(ValueSchema, name === undefined ? email : { email, name });
}

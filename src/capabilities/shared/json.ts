/**
 * A JSON value as a caller wrote it: what the contract's free-form fields
 * (google.protobuf.Value and Struct) hold once the transport has read them.
 * Capabilities take these rather than the protobuf types.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

export interface JsonObject {
  [key: string]: JsonValue;
}

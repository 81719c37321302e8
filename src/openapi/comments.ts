/**
 * Proto source comments as OpenAPI descriptions. The comments are the API
 * documentation; they only exist in descriptors that kept `source_code_info`
 * (protoc-gen-es strips it from the descriptors it embeds).
 */
import type { DescEnum, DescEnumValue, DescField, DescFile, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import type { JsonObject } from "./types.ts";

export type CommentedDesc = DescService | DescMethod | DescMessage | DescField | DescEnum | DescEnumValue;

/**
 * The leading comment of an element in its .proto source, or undefined.
 * With the generated MailService this is always undefined; it answers only
 * for descriptors loaded from a descriptor set that kept source info.
 */
export function commentOf(desc: CommentedDesc): string | undefined {
  const file = fileOf(desc);
  const locations = file.proto.sourceCodeInfo?.location;
  if (!locations || locations.length === 0) return undefined;
  const path = sourcePath(desc);
  const location = locations.find(
    (l) => l.path.length === path.length && l.path.every((segment, i) => segment === path[i]),
  );
  const text = location?.leadingComments
    ?.split("\n")
    .map((line) => line.trim())
    .join("\n")
    .trim();
  return text ? text : undefined;
}

/** The first sentence of a comment, for an operation's `summary`. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const match = /^(.+?\.)(\s|$)/.exec(flat);
  return match?.[1] ?? flat;
}

/** `object` with `description` added, unless it has one or there is none to add. */
export function withDescription(object: JsonObject, description: string | undefined): JsonObject {
  if (!description || object.description !== undefined) return object;
  // A `$ref` ignores its siblings in OpenAPI 3.0: wrap it so the text shows.
  if (object.$ref !== undefined) return { allOf: [object], description };
  return { ...object, description };
}

function fileOf(desc: CommentedDesc): DescFile {
  switch (desc.kind) {
    case "service":
    case "message":
    case "enum":
      return desc.file;
    case "rpc":
    case "field":
    case "enum_value":
      return desc.parent.file;
  }
}

// Field numbers in descriptor.proto, which source_code_info paths are made of.
const FILE_MESSAGE_TYPE = 4;
const FILE_ENUM_TYPE = 5;
const FILE_SERVICE = 6;
const MESSAGE_FIELD = 2;
const MESSAGE_NESTED_TYPE = 3;
const MESSAGE_ENUM_TYPE = 4;
const ENUM_VALUE = 2;
const SERVICE_METHOD = 2;

function sourcePath(desc: CommentedDesc): number[] {
  switch (desc.kind) {
    case "service":
      return [FILE_SERVICE, desc.file.proto.service.indexOf(desc.proto)];
    case "rpc":
      return [...sourcePath(desc.parent), SERVICE_METHOD, desc.parent.proto.method.indexOf(desc.proto)];
    case "message":
      return desc.parent
        ? [...sourcePath(desc.parent), MESSAGE_NESTED_TYPE, desc.parent.proto.nestedType.indexOf(desc.proto)]
        : [FILE_MESSAGE_TYPE, desc.file.proto.messageType.indexOf(desc.proto)];
    case "field":
      return [...sourcePath(desc.parent), MESSAGE_FIELD, desc.parent.proto.field.indexOf(desc.proto)];
    case "enum":
      return desc.parent
        ? [...sourcePath(desc.parent), MESSAGE_ENUM_TYPE, desc.parent.proto.enumType.indexOf(desc.proto)]
        : [FILE_ENUM_TYPE, desc.file.proto.enumType.indexOf(desc.proto)];
    case "enum_value":
      return [...sourcePath(desc.parent), ENUM_VALUE, desc.parent.proto.value.indexOf(desc.proto)];
  }
}

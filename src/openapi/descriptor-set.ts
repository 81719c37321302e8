import { readFileSync } from "node:fs";
import { createFileRegistry, fromBinary, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

/**
 * The descriptors with their source comments (`npm run generate` writes the
 * set with `buf build`): the generated code drops comments, and the proto
 * comments are the API documentation. The served document and
 * scripts/print-openapi.ts both read it, so they print the same thing.
 */
const DESCRIPTOR_SET = new URL("../gen/mail.binpb", import.meta.url);

export function documentedRegistry(): FileRegistry {
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_SET)));
}

/**
 * The same descriptors without their comments, as the generated code embeds
 * them: every contract file, with no list to keep (a document built from it
 * has the routes and schemas of the served one, without descriptions).
 */
export function contractRegistry(): FileRegistry {
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_SET));
  for (const file of set.file) file.sourceCodeInfo = undefined;
  return createFileRegistry(set);
}

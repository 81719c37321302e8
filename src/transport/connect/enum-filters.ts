import type { DescEnum } from "@bufbuild/protobuf";
import { enumValueToJson } from "../../contract/json-codec.ts";

/**
 * A list filter given as a contract enum, by its public name (`bounce`,
 * `charge`): absent or UNSPECIFIED is no filter; a number the contract does
 * not know comes through as its digits, so the use case's check of the
 * names refuses it (400 naming the field) instead of reading it as no filter.
 */
export function enumFilterOf<Name extends string>(desc: DescEnum, value: number | undefined): Name | undefined {
  if (value === undefined || value === 0) return undefined;
  return (enumValueToJson(desc, value) ?? String(value)) as Name;
}

import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";

/** A nullable domain date as an optional protobuf Timestamp (unset renders as null on REST). */
export function optionalTimestamp(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

import type { DescEnum } from "@bufbuild/protobuf";

/** A value of a contract enum with the name the REST answers and the URLs use. */
export interface EnumEntry<E extends number> {
  readonly value: E;
  /** The value's name after the enum's prefix, lower-cased: `MESSAGE_STATUS_QUEUED` is `queued`. */
  readonly name: string;
}

/** Every value of a contract enum but UNSPECIFIED, in the contract's order, by its public name. */
export function enumEntries<E extends number>(desc: DescEnum): readonly EnumEntry<E>[] {
  return desc.values.filter((v) => v.number !== 0).map((v) => ({ value: v.number as E, name: v.localName.toLowerCase() }));
}

/** The public name of a value (`—` for one the screen does not know). */
export function enumName<E extends number>(entries: readonly EnumEntry<E>[], value: E): string {
  return entries.find((e) => e.value === value)?.name ?? "—";
}

/** The value of a public name (from a URL), if the enum has it. */
export function enumValue<E extends number>(entries: readonly EnumEntry<E>[], name: string | null): E | undefined {
  return entries.find((e) => e.name === name)?.value;
}

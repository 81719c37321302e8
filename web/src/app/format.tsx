import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { Fragment } from "react";

/**
 * Every time and number of the screen in the member's locale and time zone
 * (the browser's), with the UTC time on hover (title) and the ISO form in
 * `dateTime` for machines.
 */
const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const UTC = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });
const NUMBER = new Intl.NumberFormat(undefined);

export function toDate(value: Timestamp | Date): Date {
  return value instanceof Date ? value : timestampDate(value);
}

export function formatLocal(value: Timestamp | Date): string {
  return LOCAL.format(toDate(value));
}

export function formatUtc(value: Timestamp | Date): string {
  return `${UTC.format(toDate(value))} UTC`;
}

export function formatNumber(value: number | bigint, options?: Intl.NumberFormatOptions): string {
  return options ? new Intl.NumberFormat(undefined, options).format(value) : NUMBER.format(value);
}

/** A time: local, UTC on hover; `empty` when absent. */
export function DateTime({ value, empty = "—" }: { value: Timestamp | Date | undefined; empty?: string }) {
  if (!value) return <span className="muted">{empty}</span>;
  const date = toDate(value);
  return (
    <time dateTime={date.toISOString()} title={formatUtc(date)}>
      {formatLocal(date)}
    </time>
  );
}

/** A number in the member's locale. */
export function NumberText({ value, options }: { value: number | bigint; options?: Intl.NumberFormatOptions }) {
  return <span className="number">{formatNumber(value, options)}</span>;
}

/** A `datetime-local` input's value (local time) as a Date; undefined when empty or invalid. */
export function fromLocalInput(value: string): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A Date as a `datetime-local` input's value in local time. */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A URL parameter holding an instant (ISO 8601, so a shared link means the same instant everywhere). */
export function dateParam(value: string | null): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * An email address or a host name that, when the line is too short, wraps
 * after "@" or before a dot, never inside a word (the text and the
 * accessible name stay the address).
 */
export function Address({ value }: { value: string }) {
  const parts = value.split(/(?<=@)|(?=\.)/);
  return (
    <>
      {parts.map((part, index) => (
        <Fragment key={index}>
          {index > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}

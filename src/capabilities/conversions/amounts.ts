/**
 * Money amounts of conversions, exact: an amount is a bigint count of
 * ten-thousandths of a currency unit (4 decimals, the column type
 * numeric(15,4)), never a binary float. Sums stay exact too.
 *
 * Callers write an amount as a decimal string ("49.95") or as a JSON
 * number (49.95). A JSON number reaches us as a double; we read it through
 * its shortest round-trip text (`String(n)`), which is exactly the decimal
 * the caller wrote whenever that decimal has at most 15 significant digits.
 * MAX_AMOUNT (11 integer digits + 4 decimals) keeps every accepted amount
 * within that, so a JSON number is never rounded on its way in: one with
 * more than 4 decimals (0.1 + 0.2 = 0.30000000000000004) is refused, not
 * rounded.
 */
export type Amount = bigint;

export const AMOUNT_SCALE = 4;
const UNIT = 10n ** BigInt(AMOUNT_SCALE);

/** 99,999,999,999.9999: the largest amount accepted (numeric(15,4)). */
export const MAX_AMOUNT: Amount = 10n ** 15n - 1n;

export const ZERO: Amount = 0n;

export type AmountParse = { readonly ok: true; readonly amount: Amount } | { readonly ok: false; readonly problem: string };

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

const SHAPE_PROBLEM = 'must be a non-negative decimal number with at most 4 decimals, as a JSON number or a string such as "49.95"';

/**
 * Reads an amount as the caller wrote it: a JSON number or a decimal string
 * (digits, optionally a dot and 1 to 4 digits). Negative, more than 4
 * decimals, exponent forms and amounts above MAX_AMOUNT are refused.
 */
export function parseAmount(value: unknown): AmountParse {
  let text: string;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return { ok: false, problem: SHAPE_PROBLEM };
    if (value < 0) return { ok: false, problem: "must not be negative" };
    text = String(value);
    // Exponent forms: tiny numbers have too many decimals, huge ones are too large.
    if (/e/i.test(text)) return { ok: false, problem: value < 1 ? "must have at most 4 decimals" : tooLarge() };
  } else if (typeof value === "string") {
    text = value;
    if (/^-\d/.test(text)) return { ok: false, problem: "must not be negative" };
  } else {
    return { ok: false, problem: SHAPE_PROBLEM };
  }
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, problem: SHAPE_PROBLEM };
  const [, whole = "", fraction = ""] = match;
  if (fraction.length > AMOUNT_SCALE) return { ok: false, problem: "must have at most 4 decimals" };
  const amount = BigInt(whole) * UNIT + BigInt(fraction.padEnd(AMOUNT_SCALE, "0"));
  if (amount > MAX_AMOUNT) return { ok: false, problem: tooLarge() };
  return { ok: true, amount };
}

function tooLarge(): string {
  return `must be at most ${formatAmount(MAX_AMOUNT)}`;
}

/**
 * Reads an amount PostgreSQL wrote (a numeric column or a sum of one, as
 * text: "49.9500", "0", "1234567890123.5000"). No bound: sums may exceed
 * MAX_AMOUNT.
 */
export function amountFromDatabase(text: string): Amount {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal amount: ${text}`);
  const [, sign = "", whole = "", fraction = ""] = match;
  // Digits past the 4th can only be zeros (numeric(15,4) and its sums).
  const amount = BigInt(whole) * UNIT + BigInt(fraction.slice(0, AMOUNT_SCALE).padEnd(AMOUNT_SCALE, "0"));
  return sign === "-" ? -amount : amount;
}

/** The exact decimal text of an amount, without trailing zeros: "49.95", "100", "0". */
export function formatAmount(amount: Amount): string {
  const negative = amount < 0n;
  const absolute = negative ? -amount : amount;
  const whole = absolute / UNIT;
  const fraction = (absolute % UNIT).toString().padStart(AMOUNT_SCALE, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** The text a numeric(15,4) parameter takes: always 4 decimals. */
export function amountToDatabase(amount: Amount): string {
  const negative = amount < 0n;
  const absolute = negative ? -amount : amount;
  return `${negative ? "-" : ""}${absolute / UNIT}.${(absolute % UNIT).toString().padStart(AMOUNT_SCALE, "0")}`;
}

export function maxAmount(a: Amount, b: Amount): Amount {
  return a > b ? a : b;
}

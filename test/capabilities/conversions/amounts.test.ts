import { describe, expect, it } from "vitest";
import {
  amountFromDatabase,
  amountToDatabase,
  formatAmount,
  MAX_AMOUNT,
  parseAmount,
} from "../../../src/capabilities/conversions/index.ts";

function parsed(value: unknown): string {
  const result = parseAmount(value);
  if (!result.ok) throw new Error(`refused: ${result.problem}`);
  return formatAmount(result.amount);
}

function problem(value: unknown): string {
  const result = parseAmount(value);
  if (result.ok) throw new Error(`accepted as ${formatAmount(result.amount)}`);
  return result.problem;
}

describe("conversion amounts", () => {
  it("read decimal strings and JSON numbers exactly, to the ten-thousandth", () => {
    expect(parsed("49.95")).toBe("49.95");
    expect(parsed(49.95)).toBe("49.95");
    expect(parsed("0.0001")).toBe("0.0001");
    expect(parsed(0.0001)).toBe("0.0001");
    expect(parsed("100")).toBe("100");
    expect(parsed(100)).toBe("100");
    expect(parsed("100.5000")).toBe("100.5");
    expect(parsed(0)).toBe("0");
    // The largest amount, as a string and as a JSON number: no float rounding either way.
    expect(parsed("99999999999.9999")).toBe("99999999999.9999");
    expect(parsed(99999999999.9999)).toBe("99999999999.9999");
    expect(parsed(12345678901.2345)).toBe("12345678901.2345");
  });

  it("sum exactly where binary floats do not (0.1 + 0.2)", () => {
    const a = parseAmount("0.1");
    const b = parseAmount(0.2);
    if (!a.ok || !b.ok) throw new Error("refused");
    expect(formatAmount(a.amount + b.amount)).toBe("0.3");
    expect(0.1 + 0.2).not.toBe(0.3);
  });

  it("refuse negatives, more than 4 decimals, other shapes and amounts above the bound, without rounding", () => {
    expect(problem(-1)).toBe("must not be negative");
    expect(problem("-0.5")).toBe("must not be negative");
    expect(problem("1.23456")).toBe("must have at most 4 decimals");
    expect(problem(0.1 + 0.2)).toBe("must have at most 4 decimals");
    expect(problem(0.0000001)).toBe("must have at most 4 decimals");
    expect(problem("100000000000")).toBe("must be at most 99999999999.9999");
    expect(problem(1e21)).toBe("must be at most 99999999999.9999");
    for (const bad of ["", "abc", "1e3", "1,5", " 1", "1.", ".5", "+1", "NaN", true, null, {}, [], Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(problem(bad)).toMatch(/non-negative decimal number/);
    }
  });

  it("round-trip through the database's numeric text", () => {
    expect(amountToDatabase(MAX_AMOUNT)).toBe("99999999999.9999");
    expect(amountToDatabase(0n)).toBe("0.0000");
    expect(amountFromDatabase("49.9500")).toBe(499_500n);
    expect(amountFromDatabase("0")).toBe(0n);
    // Sums may exceed one amount's bound.
    expect(formatAmount(amountFromDatabase("1234567890123456.7800"))).toBe("1234567890123456.78");
    expect(formatAmount(-12_345n)).toBe("-1.2345");
  });
});

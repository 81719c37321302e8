import { describe, expect, it } from "vitest";
import { createSecretSealer } from "../../../src/capabilities/sending-setup/key-sealing.ts";

describe("secret sealing", () => {
  it("round-trips, uses a fresh IV each time, and refuses tampering, other contexts and other keys", () => {
    const sealer = createSecretSealer("k1");
    const a = sealer.seal("secret", "ctx");
    const b = sealer.seal("secret", "ctx");
    expect(a).not.toBe(b);
    expect(sealer.unseal(a, "ctx")).toBe("secret");
    expect(() => sealer.unseal(a, "ctx2")).toThrow();
    expect(() => createSecretSealer("k2").unseal(a, "ctx")).toThrow();
    const parts = a.split(".");
    const tampered = [...parts.slice(0, 3), Buffer.from("SECRET").toString("base64url")].join(".");
    expect(() => sealer.unseal(tampered, "ctx")).toThrow();
    expect(() => sealer.unseal("v2.a.b.c", "ctx")).toThrow(/format/);
    expect(() => createSecretSealer("")).toThrow();
  });
});

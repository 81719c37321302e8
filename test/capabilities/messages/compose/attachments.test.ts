import { describe, expect, it } from "vitest";
import { type AttachmentInput, validateAttachments } from "../../../../src/capabilities/messages/compose/attachments.ts";
import { executableContentOf } from "../../../../src/capabilities/messages/compose/executable-content.ts";

/**
 * The attachment rules on their own (the black-box tests over REST and
 * gRPC are test/sending/attachments.test.ts): what is a program by its
 * first bytes, and every refusal naming its field.
 */
function problemsOf(attachments: AttachmentInput[]): string[] {
  const problems: string[] = [];
  validateAttachments(attachments, (field, problem) => problems.push(`${field}: ${problem}`));
  return problems;
}

const pdf = (filename: string, extra: Partial<AttachmentInput> = {}): AttachmentInput => ({
  filename,
  contentType: "application/pdf",
  content: Buffer.from("%PDF-1.7\n"),
  ...extra,
});

describe("executableContentOf", () => {
  it.each([
    ["a PE program", [0x4d, 0x5a, 0x90, 0x00]],
    ["ELF", [0x7f, 0x45, 0x4c, 0x46, 0x02]],
    ["Mach-O 64-bit, little-endian", [0xcf, 0xfa, 0xed, 0xfe]],
    ["a universal binary or Java class", [0xca, 0xfe, 0xba, 0xbe]],
    ["a shebang after a byte order mark", [0xef, 0xbb, 0xbf, 0x23, 0x21, 0x2f]],
    ["a Windows shortcut", [0x4c, 0, 0, 0, 0x01, 0x14, 0x02, 0, 0, 0]],
  ])("recognises %s", (_name, bytes) => {
    expect(executableContentOf(Uint8Array.from(bytes))).toBeDefined();
  });

  it("recognises a Java archive by its first entry, and leaves other ZIP files (an Office document) alone", () => {
    const zipEntry = (name: string) => {
      const header = Buffer.alloc(30);
      header.writeUInt32LE(0x04034b50, 0);
      header.writeUInt16LE(name.length, 26);
      return Buffer.concat([header, Buffer.from(name), Buffer.alloc(20)]);
    };
    expect(executableContentOf(zipEntry("META-INF/MANIFEST.MF"))).toBe("a Java archive");
    expect(executableContentOf(zipEntry("[Content_Types].xml"))).toBeUndefined();
  });

  it("leaves documents, images and text alone", () => {
    for (const text of ["%PDF-1.7", "\x89PNG\r\n", "GIF89a", "Hello #! not first", "M", ""]) {
      expect(executableContentOf(Buffer.from(text, "latin1")), text).toBeUndefined();
    }
  });
});

describe("validateAttachments", () => {
  it("accepts names in any script, and answers them in NFC with the type lower-cased", () => {
    const decomposed = "e\u0301te\u0301.pdf";
    const out = validateAttachments([pdf(decomposed, { contentType: "Application/PDF" }), pdf("東京.pdf")], () => {
      throw new Error("no problem expected");
    });
    expect(out.map((a) => [a.filename, a.contentType])).toEqual([
      ["été.pdf", "application/pdf"],
      ["東京.pdf", "application/pdf"],
    ]);
  });

  it("refuses each bad name by its field", () => {
    const problems = problemsOf([
      pdf("a/b.pdf"),
      pdf("a\\b.pdf"),
      pdf("invoice\u202efdp.exe"),
      pdf("zero\u200bwidth.pdf"),
      pdf("run.exe."),
      pdf(" leading.pdf"),
      pdf("Setup.Msi"),
      pdf(""),
    ]);
    const expected = [
      "attachments[0].filename: must not contain path separators (/ \\)",
      "attachments[1].filename: must not contain path separators (/ \\)",
      "attachments[2].filename: must not contain path separators (/ \\), control characters or direction marks",
      "attachments[3].filename: must not contain path separators (/ \\), control characters or direction marks",
      "attachments[4].filename: must not start with a space nor end with a dot or a space",
      "attachments[5].filename: must not start with a space nor end with a dot or a space",
      "attachments[6].filename: has the extension .msi, a program or script",
      "attachments[7].filename: is required",
    ];
    expect(problems).toHaveLength(expected.length);
    expected.forEach((start, i) => expect(problems[i]?.startsWith(start), `${problems[i]} / ${start}`).toBe(true));
  });

  it("counts the total decoded size and the number of files", () => {
    const big = (n: number): AttachmentInput => ({ filename: `${n}.bin`, contentType: "application/octet-stream", content: new Uint8Array(n) });
    expect(problemsOf([big(5 * 1024 * 1024), big(5 * 1024 * 1024)])).toEqual([]);
    expect(problemsOf([big(5 * 1024 * 1024), big(5 * 1024 * 1024 + 1)])[0]).toMatch(/^attachments: must be at most 10485760 bytes/);
    expect(problemsOf(Array.from({ length: 21 }, () => big(1)))).toEqual(["attachments: must hold at most 20 files"]);
  });
});

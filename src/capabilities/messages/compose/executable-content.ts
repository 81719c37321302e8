/**
 * Recognises programs and scripts by their first bytes, whatever the file
 * is called: a Windows program renamed `invoice.pdf` still starts with
 * `MZ`. A refusal list, not a file-type detector: it answers only "this is
 * a program", for the formats an operating system runs when the file is
 * opened, each by the magic number its loader checks:
 *
 * - `MZ`: DOS and Windows programs and libraries (PE: .exe, .dll, .scr,
 *   .sys, .cpl, .ocx...); the loader reads nothing else first;
 * - `\x7fELF`: Linux and Unix programs and shared libraries;
 * - Mach-O, both byte orders, 32 and 64 bit, and universal (fat) binaries:
 *   macOS programs; `CAFEBABE` is also a Java class file, refused too;
 * - `#!`: a script for an interpreter (shell, Python, Perl...), after an
 *   optional UTF-8 byte order mark;
 * - a Windows shortcut (.lnk, which can run a command);
 * - a ZIP archive whose first entry is under `META-INF/`: a Java archive
 *   (.jar, run by double-click where Java is installed).
 *
 * Scripts without a first-line marker (a .bat, .vbs, .js or .ps1 file) are
 * plain text and cannot be told from text: their extensions are refused
 * (attachments.ts), and a declared script type is refused.
 */
export function executableContentOf(content: Uint8Array): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((byte, i) => content[i] === byte);
  if (starts(0x4d, 0x5a) || starts(0x5a, 0x4d)) return "a Windows or DOS program (MZ)";
  if (starts(0x7f, 0x45, 0x4c, 0x46)) return "a Linux or Unix program (ELF)";
  if (MACH_O.some((magic) => starts(...magic))) return "a macOS program or a Java class (Mach-O or CAFEBABE)";
  const bom = starts(0xef, 0xbb, 0xbf) ? 3 : 0;
  if (content[bom] === 0x23 && content[bom + 1] === 0x21) return "a script (it starts with #!)";
  if (starts(0x4c, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00)) return "a Windows shortcut";
  if (isJavaArchive(content)) return "a Java archive";
  return undefined;
}

const MACH_O: readonly (readonly number[])[] = [
  [0xfe, 0xed, 0xfa, 0xce],
  [0xfe, 0xed, 0xfa, 0xcf],
  [0xce, 0xfa, 0xed, 0xfe],
  [0xcf, 0xfa, 0xed, 0xfe],
  [0xca, 0xfe, 0xba, 0xbe],
  [0xca, 0xfe, 0xba, 0xbf],
  [0xbe, 0xba, 0xfe, 0xca],
  [0xbf, 0xba, 0xfe, 0xca],
];

const META_INF = Buffer.from("META-INF/", "latin1");

/** A ZIP local file header (PK\3\4) whose entry name starts with META-INF/ (jar and its tools write the manifest first). */
function isJavaArchive(content: Uint8Array): boolean {
  if (content.length < 30 + META_INF.length || content[0] !== 0x50 || content[1] !== 0x4b || content[2] !== 0x03 || content[3] !== 0x04) {
    return false;
  }
  const nameLength = (content[26] ?? 0) | ((content[27] ?? 0) << 8);
  if (nameLength < META_INF.length) return false;
  return META_INF.every((byte, i) => content[30 + i] === byte);
}

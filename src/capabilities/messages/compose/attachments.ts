import { executableContentOf } from "./executable-content.ts";
import { exceedsCodePoints } from "./text-rules.ts";

/**
 * The rules of a send's attachments (POST /mail/v1/send `attachments`,
 * docs/interpretations.md "Attachments"). Pure: validate-send.ts calls it
 * with the other fields, so every bad attachment is named in the one 400
 * (`attachments[2].filename`), on every door.
 */

/** The limits of a send's attachments. */
export const ATTACHMENT_LIMITS = {
  /** Files per message. */
  count: 20,
  /** Decoded bytes of all files of a message together: 10 MiB. */
  totalBytes: 10 * 1024 * 1024,
  /** A file name, in Unicode code points. */
  filename: 150,
  contentType: 255,
  contentId: 100,
} as const;

/**
 * Names ending in these are refused: programs, installers, scripts and
 * shortcuts that run when opened on Windows, macOS or Linux (the list the
 * large mailbox providers block, with the Unix script and package types
 * added). Compared case-insensitively with the last extension, so
 * `invoice.pdf.exe` is refused and `setup.EXE` too.
 */
export const REFUSED_EXTENSIONS: ReadonlySet<string> = new Set([
  // Windows programs, libraries, installers, shortcuts, disk images.
  "exe", "com", "scr", "pif", "cpl", "dll", "sys", "drv", "ocx", "msi", "msp", "mst", "msix", "msixbundle", "appx", "appxbundle",
  "lnk", "url", "reg", "inf", "ins", "isp", "hta", "chm", "cab", "msc", "gadget", "application", "xll", "iso", "img", "vhd", "vhdx",
  // Windows scripts.
  "bat", "cmd", "js", "jse", "mjs", "vb", "vbe", "vbs", "ws", "wsc", "wsf", "wsh", "ps1", "ps1xml", "ps2", "psc1", "psm1", "psd1", "sct", "shb",
  // Java, Android.
  "jar", "jnlp", "class", "apk",
  // macOS and Unix programs, scripts and packages.
  "app", "command", "dmg", "pkg", "sh", "bash", "csh", "ksh", "zsh", "run", "elf", "so", "dylib", "deb", "rpm", "py", "pyc", "pl", "rb", "php",
]);

/**
 * Declared types of programs and scripts, refused whatever the name
 * (`application/x-msdownload` on `report.pdf` is a program sent as a PDF).
 */
export const REFUSED_CONTENT_TYPES: ReadonlySet<string> = new Set([
  "application/x-msdownload",
  "application/x-msdos-program",
  "application/x-ms-installer",
  "application/x-msi",
  "application/vnd.microsoft.portable-executable",
  "application/x-executable",
  "application/x-elf",
  "application/x-mach-binary",
  "application/x-sharedlib",
  "application/java-archive",
  "application/x-java-archive",
  "application/java-vm",
  "application/vnd.android.package-archive",
  "application/x-sh",
  "application/x-csh",
  "application/x-shellscript",
  "application/x-bat",
  "application/x-powershell",
  "application/javascript",
  "application/x-javascript",
  "text/javascript",
  "application/ecmascript",
  "text/vbscript",
  "application/x-vbscript",
  "application/hta",
  "application/x-apple-diskimage",
]);

/** A `type/subtype` media type without parameters (RFC 6838 restricted names). */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;
/** A Content-ID's characters: atext without the ones that need quoting in a header or a URL. */
const CONTENT_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/;
/**
 * Characters no file name may hold: path separators (the name would be a
 * path on the recipient's disk), C0 and C1 controls and DEL, and the Unicode
 * direction and invisible formatting marks that make `exe.pdf` show
 * for `fdp.exe` (U+202E), or hide characters.
 */
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_NAME = /[/\\\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/u;

/** One attachment as the caller wrote it. */
export interface AttachmentInput {
  readonly filename: string;
  readonly contentType: string;
  readonly content: Uint8Array;
  readonly contentId?: string | undefined;
}

/** One attachment as it is stored and sent. */
export interface ValidatedAttachment {
  /** The name, Unicode NFC (the same name sent the same way from every system). */
  readonly filename: string;
  /** The media type, lower-cased. */
  readonly contentType: string;
  readonly content: Uint8Array;
  /** Inline images only: the `cid:` the HTML refers to. */
  readonly contentId?: string;
}

type Report = (field: string, problem: string) => void;

/**
 * Checks a send's attachments: how many and how large, each name, type,
 * inline id and content. Reports every problem by field and answers the
 * attachments as stored and sent (empty when none were sent).
 */
export function validateAttachments(attachments: readonly AttachmentInput[] | undefined, report: Report): ValidatedAttachment[] {
  const list = attachments ?? [];
  if (list.length > ATTACHMENT_LIMITS.count) report("attachments", `must hold at most ${ATTACHMENT_LIMITS.count} files`);
  const total = list.reduce((sum, attachment) => sum + attachment.content.length, 0);
  if (total > ATTACHMENT_LIMITS.totalBytes) {
    report("attachments", `must be at most ${ATTACHMENT_LIMITS.totalBytes} bytes (10 MiB) together, decoded; these are ${total}`);
  }
  const contentIds = new Set<string>();
  const out: ValidatedAttachment[] = [];
  list.forEach((attachment, index) => {
    const at = (field: string) => `attachments[${index}].${field}`;
    let ok = true;
    const fail = (field: string, problem: string) => {
      report(at(field), problem);
      ok = false;
    };

    const filename = attachment.filename.normalize("NFC");
    const nameProblem = filenameProblem(filename);
    if (nameProblem) fail("filename", nameProblem);

    const contentType = attachment.contentType.trim().toLowerCase();
    if (contentType === "") fail("contentType", "is required");
    else if (!MEDIA_TYPE.test(contentType)) fail("contentType", "must be a media type `type/subtype` without parameters, e.g. application/pdf");
    else if (REFUSED_CONTENT_TYPES.has(contentType)) fail("contentType", "is a program or script type: such files are not sent");

    if (attachment.content.length === 0) fail("content", "is required (an empty file)");
    else {
      const executable = executableContentOf(attachment.content);
      if (executable) fail("content", `is ${executable}: programs and scripts are not sent, whatever their name`);
    }

    const contentId = attachment.contentId;
    if (contentId !== undefined) {
      if (contentId === "") fail("contentId", "must not be empty (leave it out for an ordinary attachment)");
      else if (exceedsCodePoints(contentId, ATTACHMENT_LIMITS.contentId)) fail("contentId", `must be at most ${ATTACHMENT_LIMITS.contentId} characters`);
      else if (!CONTENT_ID.test(contentId)) fail("contentId", "must be letters, digits and . _ @ + - (starting with a letter or digit)");
      else if (contentIds.has(contentId)) fail("contentId", "is used by another attachment of this message");
      else if (!contentType.startsWith("image/")) fail("contentId", "is for inline images: the contentType must be image/*");
      contentIds.add(contentId);
    }

    if (ok) out.push({ filename, contentType, content: attachment.content, ...(contentId !== undefined ? { contentId } : {}) });
  });
  return out;
}

/** Why a file name is refused, or undefined when it is fine. */
function filenameProblem(name: string): string | undefined {
  if (name.trim() === "") return "is required";
  if (exceedsCodePoints(name, ATTACHMENT_LIMITS.filename)) return `must be at most ${ATTACHMENT_LIMITS.filename} characters`;
  if (FORBIDDEN_IN_NAME.test(name)) return "must not contain path separators (/ \\), control characters or direction marks";
  if (name.startsWith(".")) return "must not start with a dot (a hidden file)";
  // Windows drops trailing dots and spaces: `run.exe.` would be saved as `run.exe`.
  if (/[. ]$/.test(name) || name !== name.trimStart()) return "must not start with a space nor end with a dot or a space";
  const dot = name.lastIndexOf(".");
  const extension = dot === -1 ? "" : name.slice(dot + 1).toLowerCase();
  if (REFUSED_EXTENSIONS.has(extension)) return `has the extension .${extension}, a program or script: such files are not sent`;
  return undefined;
}

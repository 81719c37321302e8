import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { sendFingerprint } from "../../../../src/capabilities/messages/accept/send-fingerprint.ts";
import { SendMessageRequestSchema } from "../../../../src/gen/mail/v1/mail_pb.js";
import { sendCommandOf } from "../../../../src/transport/connect/mail/mapping.ts";

/**
 * A message keeps the fingerprint of the send that created it; a retry with
 * the same key is the original message only when its fingerprint is the
 * same bytes. These were computed for these requests by the code that
 * stored the messages there are: a change that gives other bytes turns
 * every retry of an earlier send into 409 IDEMPOTENCY_CONFLICT. Each
 * request takes the path of a send: its JSON body decoded as the REST
 * bridge decodes it, mapped to the send command, fingerprinted.
 */
const PINNED: ReadonlyArray<{ readonly name: string; readonly body: JsonObject; readonly fingerprint: string }> = [
  {
    name: "a string recipient, subject and html",
    body: { to: "ada@example.com", subject: "Hello", html: "<p>Hi</p>" },
    fingerprint: "d01cd142d91bab2f975ffdabd6f797cf1735304082331fc628ead66c30c536eb",
  },
  {
    name: "an address as the caller wrote it (not normalised)",
    body: { to: "Ada@EXAMPLE.com", subject: "Hello", html: "<p>Hi</p>" },
    fingerprint: "c95349fc66f9b3ef5ea30a93890d0c24208b5bdcc10d643c55557fa920f993c0",
  },
  {
    name: "a named recipient, text, tags, sender, reply-to and a body key",
    body: {
      to: { email: "ada@example.com", name: "Ada Lovelace" },
      subject: "Your receipt",
      html: "<p>Thanks</p>",
      text: "Thanks",
      tags: { tier: "gold", campaign: "welcome" },
      senderId: "6f1c7a52-5a1e-4f1f-9f77-0d7c1b0d2a11",
      replyTo: "help@shop.example",
      idempotencyKey: "order-1",
    },
    fingerprint: "ef3efb466c3cef64d4fa887975c133a9beecbf0366fb1c53105155c8355c9843",
  },
  {
    name: "a template with variables of every kind",
    body: {
      to: { name: "", email: "bob@example.com" },
      templateId: "receipt",
      variables: { first: "Bob", count: 3, total: 49.95, big: 1e21, vip: true, note: null, empty: "" },
    },
    fingerprint: "fc24c6d52e9e8a07dc8c817fb31320cff455fd9b333993ab2a361439d7a80f79",
  },
  {
    name: "a template with an empty variables object and empty optional fields",
    body: { to: "carol@example.com", templateId: "welcome", variables: {}, subject: "", html: " ", text: "" },
    fingerprint: "c4ea8b432c5fbe39c38a6eba3acedeb63a67540af202fdcb149a3dd634c03919",
  },
  {
    name: "characters that JSON escapes",
    body: { to: "de@exämple.com", subject: 'Bonjour "à" tous \u2028 ✓ 😀', html: "<p>\\ </p>\n", tags: { ключ: "значение" } },
    fingerprint: "df1fcf75197823439a9942cf3d18068472a36dd9781ad67bbb19d59232d62baa",
  },
];

function fingerprintOf(body: JsonObject, keyHeader: string | null = null): string {
  const command = sendCommandOf(fromJson(SendMessageRequestSchema, body), { companyId: "c", keyId: "k", actor: { kind: "key" } }, keyHeader);
  return sendFingerprint(command).toString("hex");
}

describe("the fingerprint a message keeps with its idempotency key", () => {
  it.each(PINNED)("is the same bytes as ever: $name", ({ body, fingerprint }) => {
    expect(fingerprintOf(body)).toBe(fingerprint);
  });

  it("is the same for the key in the header, in the body, or from another API key", () => {
    const [first] = PINNED;
    if (!first) throw new Error("no pinned send");
    expect(fingerprintOf(first.body, "order-9")).toBe(first.fingerprint);
    expect(fingerprintOf({ ...first.body, idempotencyKey: "order-9" }, "order-9")).toBe(first.fingerprint);
    const command = sendCommandOf(fromJson(SendMessageRequestSchema, first.body), { companyId: "c", keyId: "another key", actor: { kind: "key" } }, null);
    expect(sendFingerprint(command).toString("hex")).toBe(first.fingerprint);
  });
});

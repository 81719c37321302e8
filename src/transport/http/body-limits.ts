import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, MethodImpl, ServiceImpl } from "@connectrpc/connect";
import { ATTACHMENT_LIMITS } from "../../capabilities/messages/compose/attachments.ts";
import { MailService } from "../../gen/mail/v1/mail_pb.js";

/**
 * How large a request body may be, per RPC, on every door (the REST
 * bridge's routes, Connect, gRPC-Web and gRPC, its direct unary path
 * included). Every RPC takes MAX_BODY_BYTES (default 2 MiB) but the send,
 * which takes that plus the room its attachments need in a JSON body
 * (ATTACHMENTS_BODY_ALLOWANCE): 10 MiB of files are about 13.3 MiB of
 * base64. A body past an RPC's own limit answers 413 PAYLOAD_TOO_LARGE
 * (RESOURCE_EXHAUSTED over gRPC); the send's fields are then checked by
 * their own rules (attachments[].content: 10 MiB together, decoded).
 */

/**
 * The attachments' room in a send's JSON body: their base64 (4 bytes for
 * 3), with one character in 64 (`/`) possibly escaped as `\/` by the
 * caller's JSON encoder, and 1 KiB per file for its name, type, id and
 * punctuation.
 */
export const ATTACHMENTS_BODY_ALLOWANCE =
  Math.ceil(((Math.ceil(ATTACHMENT_LIMITS.totalBytes / 3) * 4) * 65) / 64) + ATTACHMENT_LIMITS.count * 1024;

/** The RPCs whose bodies carry attachments. */
const WITH_ATTACHMENTS: ReadonlySet<DescMethod> = new Set([MailService.method.sendMessage]);

/** The largest request body `method` takes, MAX_BODY_BYTES being `maxBodyBytes`. */
export function bodyLimitOf(method: DescMethod, maxBodyBytes: number): number {
  return WITH_ATTACHMENTS.has(method) ? maxBodyBytes + ATTACHMENTS_BODY_ALLOWANCE : maxBodyBytes;
}

/**
 * Registers a service on a Connect router with each RPC's own body limit
 * (Connect's `readMaxBytes`): RPC by RPC when one of them differs from the
 * router's, else as one service.
 */
export function serveWithBodyLimits<S extends DescService>(router: ConnectRouter, service: S, implementation: ServiceImpl<S>, maxBodyBytes: number): void {
  if (!service.methods.some((method) => WITH_ATTACHMENTS.has(method))) {
    router.service(service, implementation);
    return;
  }
  const methods = implementation as unknown as Record<string, MethodImpl<DescMethod>>;
  for (const method of service.methods) {
    const impl = methods[method.localName];
    if (!impl) throw new Error(`${service.typeName}.${method.name} has no implementation`);
    router.rpc(method, impl, { readMaxBytes: bodyLimitOf(method, maxBodyBytes) });
  }
}

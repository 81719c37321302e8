import { isGrpcServiceError } from "@temporalio/client";
import type { Config } from "../config.ts";
import { temporalConnectionOptions } from "../adapters/temporal/client.ts";
import { ensureSearchAttributes } from "../runtime/temporal-dev-server.ts";
import { SEARCH_ATTRIBUTES } from "../../workflows/search-attributes.ts";

/** gRPC codes of an operator API this client may not use (Temporal Cloud answers one of them). */
const NOT_ALLOWED = new Set([7 /* PERMISSION_DENIED */, 12 /* UNIMPLEMENTED */, 16 /* UNAUTHENTICATED */]);

/**
 * At the start of an API process: registers the workflows' search
 * attributes in the namespace (a workflow that sets one the namespace lacks
 * cannot start), over the configured TLS / API key. Temporal Cloud does
 * not open its operator API to namespace clients: there the attributes are
 * created beforehand (Cloud UI or tcld), and this only warns, naming them.
 */
export async function registerSearchAttributes(config: Config, address: string, warn: (line: string) => void): Promise<void> {
  try {
    await ensureSearchAttributes(
      address,
      config.temporalNamespace,
      temporalConnectionOptions({ tls: config.temporalTls, apiKey: config.temporalApiKey }),
    );
  } catch (error) {
    if (!isGrpcServiceError(error) || !NOT_ALLOWED.has(error.code)) throw error;
    const names = SEARCH_ATTRIBUTES.map((attribute) => attribute.name).join(", ");
    warn(
      `the search attributes could not be checked in namespace ${config.temporalNamespace} (${error.details}): ` +
        `the operator API is not open to this client (Temporal Cloud). Make sure these Keyword attributes exist there: ${names}`,
    );
  }
}

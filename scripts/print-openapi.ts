/**
 * Prints the OpenAPI document of the JSON HTTP routes to stdout, exactly as
 * the service serves it (GET /mail/v1/openapi.json: built from the
 * descriptor set with the proto comments, src/gen/mail.binpb):
 *
 *   node scripts/print-openapi.ts [serverUrl] > openapi.json
 *
 * Without serverUrl the document's server is `/` (the host serving it).
 */
import { documentedRegistry } from "../src/openapi/descriptor-set.ts";
import { generateOpenApi } from "../src/openapi/document.ts";

const serverUrl = process.argv[2];
const registry = documentedRegistry();
const doc = generateOpenApi(serverUrl === undefined ? { registry } : { registry, serverUrl });
process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);

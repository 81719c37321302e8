/**
 * Prints the OpenAPI document of the JSON HTTP routes to stdout, exactly as
 * the service builds it from the descriptors:
 *
 *   node scripts/print-openapi.ts [serverUrl] > openapi.json
 */
import { generateOpenApi } from "../src/openapi/generate.ts";

const serverUrl = process.argv[2];
const doc = generateOpenApi(serverUrl === undefined ? {} : { serverUrl });
process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);

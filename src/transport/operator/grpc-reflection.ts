import {
  create,
  createFileRegistry,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescMethodBiDiStreaming,
  type DescService,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { type FileDescriptorProto, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { HealthService } from "./grpc-health.ts";

/**
 * gRPC server reflection (`grpc.reflection.v1` and `v1alpha`
 * `ServerReflection/ServerReflectionInfo`), so that grpcurl, grpcui, Postman
 * and `buf curl` call the service without its proto files.
 *
 * It describes what the router it is registered on serves, read from the
 * router at each request: the public listeners list the public services, the
 * operator listener the operator's. Every file is answered with the files it
 * imports (clients need them to resolve types), each file at most once per
 * stream, as grpc-go does.
 *
 * Like Health, the descriptor is built here rather than from proto/, which
 * holds the mail contract only (and generates its OpenAPI document).
 */

// FieldDescriptorProto types and labels used below.
const STRING = 9;
const BYTES = 12;
const INT32 = 5;
const MESSAGE = 11;
const OPTIONAL = 1;
const REPEATED = 3;

function reflectionFile(pkg: string): FileDescriptorProto {
  const field = (name: string, number: number, type: number, extra: { typeName?: string; label?: number; oneofIndex?: number } = {}) => ({
    name,
    number,
    type,
    label: extra.label ?? OPTIONAL,
    jsonName: name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
    ...(extra.typeName ? { typeName: `.${pkg}.${extra.typeName}` } : {}),
    ...(extra.oneofIndex === undefined ? {} : { oneofIndex: extra.oneofIndex }),
  });
  return create(FileDescriptorProtoSchema, {
    name: `grpc/reflection/${pkg.split(".").at(-1)}/reflection.proto`,
    package: pkg,
    syntax: "proto3",
    messageType: [
      {
        name: "ServerReflectionRequest",
        field: [
          field("host", 1, STRING),
          field("file_by_filename", 3, STRING, { oneofIndex: 0 }),
          field("file_containing_symbol", 4, STRING, { oneofIndex: 0 }),
          field("file_containing_extension", 5, MESSAGE, { typeName: "ExtensionRequest", oneofIndex: 0 }),
          field("all_extension_numbers_of_type", 6, STRING, { oneofIndex: 0 }),
          field("list_services", 7, STRING, { oneofIndex: 0 }),
        ],
        oneofDecl: [{ name: "message_request" }],
      },
      { name: "ExtensionRequest", field: [field("containing_type", 1, STRING), field("extension_number", 2, INT32)] },
      {
        name: "ServerReflectionResponse",
        field: [
          field("valid_host", 1, STRING),
          field("original_request", 2, MESSAGE, { typeName: "ServerReflectionRequest" }),
          field("file_descriptor_response", 4, MESSAGE, { typeName: "FileDescriptorResponse", oneofIndex: 0 }),
          field("all_extension_numbers_response", 5, MESSAGE, { typeName: "ExtensionNumberResponse", oneofIndex: 0 }),
          field("list_services_response", 6, MESSAGE, { typeName: "ListServiceResponse", oneofIndex: 0 }),
          field("error_response", 7, MESSAGE, { typeName: "ErrorResponse", oneofIndex: 0 }),
        ],
        oneofDecl: [{ name: "message_response" }],
      },
      { name: "FileDescriptorResponse", field: [field("file_descriptor_proto", 1, BYTES, { label: REPEATED })] },
      { name: "ExtensionNumberResponse", field: [field("base_type_name", 1, STRING), field("extension_number", 2, INT32, { label: REPEATED })] },
      { name: "ListServiceResponse", field: [field("service", 1, MESSAGE, { typeName: "ServiceResponse", label: REPEATED })] },
      { name: "ServiceResponse", field: [field("name", 1, STRING)] },
      { name: "ErrorResponse", field: [field("error_code", 1, INT32), field("error_message", 2, STRING)] },
    ],
    service: [
      {
        name: "ServerReflection",
        method: [
          {
            name: "ServerReflectionInfo",
            inputType: `.${pkg}.ServerReflectionRequest`,
            outputType: `.${pkg}.ServerReflectionResponse`,
            clientStreaming: true,
            serverStreaming: true,
          },
        ],
      },
    ],
  });
}

const v1 = createFileRegistry(reflectionFile("grpc.reflection.v1"), () => undefined);
const v1alpha = createFileRegistry(reflectionFile("grpc.reflection.v1alpha"), () => undefined);

function found<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`grpc reflection descriptor: ${name} missing`);
  return value;
}

export const ReflectionServiceV1: DescService = found(v1.getService("grpc.reflection.v1.ServerReflection"), "v1");
export const ReflectionServiceV1alpha: DescService = found(v1alpha.getService("grpc.reflection.v1alpha.ServerReflection"), "v1alpha");

/** The services that answer without a token (like GET /livez): health and reflection. */
export const OPEN_SERVICE_NAMES: ReadonlySet<string> = new Set([
  HealthService.typeName,
  ReflectionServiceV1.typeName,
  ReflectionServiceV1alpha.typeName,
]);

/** The request as protobuf-es represents it (the descriptor above; no generated types). */
interface ReflectionRequest {
  host: string;
  messageRequest:
    | { case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; value: string }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

// gRPC status codes used in ErrorResponse.
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/** What one router serves, indexed for the four kinds of question. */
interface Catalogue {
  readonly services: readonly string[];
  readonly fileByName: ReadonlyMap<string, DescFile>;
  readonly fileBySymbol: ReadonlyMap<string, DescFile>;
  readonly extensionsOf: ReadonlyMap<string, readonly DescExtension[]>;
}

function catalogue(router: ConnectRouter): Catalogue {
  const services = new Map<string, DescService>();
  for (const handler of router.handlers) services.set(handler.service.typeName, handler.service);
  const fileByName = new Map<string, DescFile>();
  const fileBySymbol = new Map<string, DescFile>();
  const extensionsOf = new Map<string, DescExtension[]>();

  const addMessage = (file: DescFile, message: DescMessage) => {
    fileBySymbol.set(message.typeName, file);
    for (const nested of message.nestedMessages) addMessage(file, nested);
    for (const nestedEnum of message.nestedEnums) addEnum(file, nestedEnum);
    for (const extension of message.nestedExtensions) addExtension(file, extension);
  };
  const addEnum = (file: DescFile, descEnum: DescEnum) => fileBySymbol.set(descEnum.typeName, file);
  const addExtension = (file: DescFile, extension: DescExtension) => {
    fileBySymbol.set(extension.typeName, file);
    const list = extensionsOf.get(extension.extendee.typeName) ?? [];
    list.push(extension);
    extensionsOf.set(extension.extendee.typeName, list);
  };
  const addFile = (file: DescFile) => {
    if (fileByName.has(file.proto.name)) return;
    fileByName.set(file.proto.name, file);
    for (const dependency of file.dependencies) addFile(dependency);
    for (const message of file.messages) addMessage(file, message);
    for (const descEnum of file.enums) addEnum(file, descEnum);
    for (const extension of file.extensions) addExtension(file, extension);
    for (const service of file.services) {
      fileBySymbol.set(service.typeName, file);
      for (const method of service.methods) fileBySymbol.set(`${service.typeName}.${method.name}`, file);
    }
  };
  for (const service of services.values()) addFile(service.file);
  return { services: [...services.keys()].sort(), fileByName, fileBySymbol, extensionsOf };
}

/** `file` and everything it imports, dependencies first, leaving out what this stream already sent. */
function withDependencies(file: DescFile, sent: Set<string>): Uint8Array[] {
  const out: Uint8Array[] = [];
  const visit = (f: DescFile) => {
    if (sent.has(f.proto.name)) return;
    sent.add(f.proto.name);
    for (const dependency of f.dependencies) visit(dependency);
    out.push(toBinary(FileDescriptorProtoSchema, f.proto));
  };
  visit(file);
  // The file asked for comes first: some clients read only the first entry.
  const own = out.pop();
  return own ? [own, ...out] : out;
}

type ResponseInit = Record<string, unknown>;

function answer(request: ReflectionRequest, known: Catalogue, sent: Set<string>): ResponseInit {
  const error = (code: number, message: string) => ({ case: "errorResponse", value: { errorCode: code, errorMessage: message } });
  const files = (file: DescFile | undefined, what: string) =>
    file
      ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withDependencies(file, sent) } }
      : error(NOT_FOUND, `${what} not found`);
  const question = request.messageRequest;
  switch (question.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: known.services.map((name) => ({ name })) } };
    case "fileByFilename":
      return files(known.fileByName.get(question.value), `file ${question.value}`);
    case "fileContainingSymbol": {
      const symbol = question.value.replace(/^\./, "");
      return files(known.fileBySymbol.get(symbol), `symbol ${symbol}`);
    }
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = question.value;
      const extension = known.extensionsOf.get(containingType)?.find((e) => e.number === extensionNumber);
      return files(extension?.file, `extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const extensions = known.extensionsOf.get(question.value);
      if (!extensions && !known.fileBySymbol.has(question.value)) return error(NOT_FOUND, `type ${question.value} not found`);
      return {
        case: "allExtensionNumbersResponse",
        value: { baseTypeName: question.value, extensionNumber: (extensions ?? []).map((e) => e.number) },
      };
    }
    default:
      return error(INVALID_ARGUMENT, "the request names no question");
  }
}

/** Registers both reflection versions on `router`; they describe whatever else the router serves. */
export function grpcReflection(router: ConnectRouter): void {
  for (const service of [ReflectionServiceV1, ReflectionServiceV1alpha]) {
    const method = found(service.methods.find((m) => m.name === "ServerReflectionInfo"), "ServerReflectionInfo") as DescMethodBiDiStreaming;
    router.rpc(method, async function* (requests: AsyncIterable<Message>) {
      const known = catalogue(router);
      const sent = new Set<string>();
      for await (const message of requests) {
        const request = message as unknown as ReflectionRequest;
        yield create(method.output, {
          validHost: request.host,
          originalRequest: message,
          messageResponse: answer(request, known, sent),
        } as never);
      }
    });
  }
}

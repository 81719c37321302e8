import { ApiError } from "../../contract/api-error.ts";

/**
 * The handler of an RPC that is part of the contract but not built yet: it
 * answers NOT_IMPLEMENTED (HTTP 501, gRPC UNIMPLEMENTED) naming the RPC.
 */
export function notImplemented(rpc: string): () => never {
  return () => {
    throw new ApiError("NOT_IMPLEMENTED", `${rpc} is part of the contract but not implemented yet.`);
  };
}

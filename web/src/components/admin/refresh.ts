import type { DescService } from "@bufbuild/protobuf";
import { createConnectQueryKey } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";

/** Refetches every cached answer of a service after a change made through it. */
export function useRefresh(service: DescService): () => Promise<void> {
  const client = useQueryClient();
  return useCallback(() => client.invalidateQueries({ queryKey: createConnectQueryKey({ schema: service, cardinality: undefined }) }), [client, service]);
}

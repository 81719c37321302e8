import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { useInfiniteQuery } from "@connectrpc/connect-query";

/** One page of every list the screen reads (the contract's default page size). */
export const PAGE_SIZE = 25;

/** The element type of a list answer's `items`. */
export type ItemOf<O extends DescMessage> = MessageShape<O> extends { items: readonly (infer T)[] } ? T : never;

/** A list read page by page, as <ListView> shows it. */
export interface PagedList<T> {
  /** Every item read so far, in the server's order. */
  readonly items: readonly T[];
  /** No page has arrived yet. */
  readonly pending: boolean;
  /** Why the list could not be read (nothing read yet), or could not be refreshed (items still shown). */
  readonly error: unknown;
  /** Whether the request takes a cursor: the list pages (and says where it ends). */
  readonly paged: boolean;
  readonly hasMore: boolean;
  readonly loadingMore: boolean;
  /** Why the next page could not be read (the items read so far stay). */
  readonly moreError: unknown;
  loadMore(): void;
  retry(): void;
}

/**
 * Reads a list RPC page by page: `limit` and `cursor` go into the request
 * when its message has them, and the answer's `nextCursor`, when it has one,
 * leads to the next page. A list whose contract has no cursor yet is one
 * page; once the fields exist, it pages like the others with no change here.
 */
export function usePagedList<I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  input: MessageInitShape<I>,
  options: { refetchInterval?: number | false } = {},
): PagedList<ItemOf<O>> {
  const paged = "cursor" in method.input.field;
  const pagedInput = paged ? { ...("limit" in method.input.field ? { limit: PAGE_SIZE } : {}), ...input, cursor: "" } : input;
  // Connect-Query types its page key against the request message; which key a list has is only known here, at run time.
  const query = useInfiniteQuery(method, pagedInput as never, {
    pageParamKey: "cursor" as never,
    getNextPageParam: (page: MessageShape<O>) => nextCursorOf(page) as never,
    refetchInterval: options.refetchInterval ?? false,
  });
  const pages = (query.data?.pages ?? []) as readonly MessageShape<O>[];
  return {
    items: pages.flatMap((page) => (page as { items?: ItemOf<O>[] }).items ?? []),
    pending: query.isPending,
    error: query.isError && !query.isFetchNextPageError ? query.error : undefined,
    paged,
    hasMore: query.hasNextPage,
    loadingMore: query.isFetchingNextPage,
    moreError: query.isFetchNextPageError ? query.error : undefined,
    loadMore: () => void query.fetchNextPage(),
    retry: () => void query.refetch(),
  };
}

/** The answer's cursor to the next page; undefined on the last page, or when the answer has no cursor field. */
function nextCursorOf(page: unknown): string | undefined {
  const next = (page as { nextCursor?: unknown }).nextCursor;
  return typeof next === "string" && next !== "" ? next : undefined;
}

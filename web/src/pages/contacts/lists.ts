import { useQuery } from "@connectrpc/connect-query";
import { ListsService } from "@gen/mail/v1/lists_pb.js";
import { useSession } from "../../app/auth/session.tsx";

/**
 * The company's contact lists by id, for naming a contact's lists and the
 * list filter. Listing them needs Mail administration (the contract's
 * scope of ListContactLists): a member gets no names (undefined) and sees
 * list ids.
 */
export function useListNames(): ReadonlyMap<string, string> | undefined {
  const { isAdmin } = useSession();
  const lists = useQuery(ListsService.method.listContactLists, {}, { enabled: isAdmin });
  if (!isAdmin || !lists.data) return undefined;
  return new Map(lists.data.items.map((list) => [list.id, list.name]));
}

import type { ServiceImpl } from "@connectrpc/connect";
import type { Suppressions } from "../../../capabilities/suppressions/index.ts";
import type { SuppressionsService } from "../../../gen/mail/v1/suppressions_pb.js";
import { addSuppressionCommand, listSuppressionsCommand, removeSuppressionCommand, suppressionMessage, suppressionQuery } from "./mapping.ts";

/** SuppressionsService: API keys, member sessions and operators acting for the company (one handler per RPC). */
export function suppressionsServiceImpl(suppressions: Suppressions): ServiceImpl<typeof SuppressionsService> {
  return {
    async listSuppressions(req, ctx) {
      const page = await suppressions.list(listSuppressionsCommand(req, ctx));
      return { items: page.items.map(suppressionMessage), nextCursor: page.nextCursor ?? undefined };
    },
    async getSuppression(req, ctx) {
      return { suppression: suppressionMessage(await suppressions.get(suppressionQuery(req, ctx))) };
    },
    async addSuppression(req, ctx) {
      const added = await suppressions.add(addSuppressionCommand(req, ctx));
      return { suppression: suppressionMessage(added.suppression), created: added.created };
    },
    async removeSuppression(req, ctx) {
      return { suppression: suppressionMessage(await suppressions.remove(removeSuppressionCommand(req, ctx))) };
    },
  };
}

import { useMutation } from "@connectrpc/connect-query";
import { type ApiKey, ApiKeysService } from "@gen/mail/v1/api_keys_pb.js";
import { ConfirmAction } from "../../components/admin/ConfirmAction.tsx";
import { useRefresh } from "../../components/admin/refresh.ts";

export function RevokeKey({ apiKey }: { apiKey: ApiKey }) {
  const refresh = useRefresh(ApiKeysService);
  const revoke = useMutation(ApiKeysService.method.revokeApiKey);
  return (
    <ConfirmAction
      label="Revoke"
      ariaLabel={`Revoke ${apiKey.name} (${apiKey.prefix})`}
      title={`Revoke the key “${apiKey.name}”?`}
      description={
        <p>
          Calls with <span className="mono">{apiKey.prefix}…</span> are refused from the next one on (401 API_KEY_INVALID). This cannot be undone.
        </p>
      }
      confirmLabel="Revoke key"
      destructive
      onConfirm={async () => {
        await revoke.mutateAsync({ id: apiKey.id });
        await refresh();
      }}
    />
  );
}

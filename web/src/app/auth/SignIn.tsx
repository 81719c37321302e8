import { createConnectQueryKey, useMutation, useTransport } from "@connectrpc/connect-query";
import { create } from "@bufbuild/protobuf";
import { GetSessionResponseSchema, SessionService } from "@gen/mail/v1/sessions_pb.js";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { Navigate, useNavigate } from "react-router";
import { errorCode, errorMessage } from "../errors.ts";
import { consumeSignInToken } from "./sign-in-token.ts";
import { SignedOut } from "./SignedOut.tsx";

/**
 * /admin/sign-in#token=...: the token was taken from the address bar before
 * the first render (sign-in-token.ts); it is exchanged once for a session
 * (the server sets the HttpOnly cookie), then the message log opens.
 */
export function SignIn() {
  const token = useRef<string | undefined>(undefined);
  const started = useRef(false);
  if (!started.current && token.current === undefined) token.current = consumeSignInToken();
  const client = useQueryClient();
  const transport = useTransport();
  const navigate = useNavigate();
  const exchange = useMutation(SessionService.method.exchangeSignInLink, {
    onSuccess: (answer) => {
      client.removeQueries();
      client.setQueryData(createConnectQueryKey({ schema: SessionService.method.getSession, input: {}, cardinality: "finite", transport }), create(GetSessionResponseSchema, { session: answer.session }));
      navigate("/overview", { replace: true });
    },
  });
  const { mutate } = exchange;

  useEffect(() => {
    if (started.current || !token.current) return;
    started.current = true;
    mutate({ token: token.current });
    token.current = undefined;
  }, [mutate]);

  if (!started.current && !token.current) {
    // No token in the link (or opened again from the history): nothing to exchange.
    return exchange.isIdle ? <Navigate to="/overview" replace /> : null;
  }
  if (exchange.isError) {
    const code = errorCode(exchange.error);
    const reason =
      code === "SIGN_IN_LINK_INVALID"
        ? "This sign-in link cannot be used: it is unknown, already used or expired. Ask for a new one."
        : code === "RATE_LIMITED"
          ? "Too many sign-in attempts. Wait a minute, then open a new link."
          : errorMessage(exchange.error);
    return <SignedOut reason={reason} />;
  }
  return (
    <main className="page-centered">
      <p role="status">Signing in…</p>
    </main>
  );
}

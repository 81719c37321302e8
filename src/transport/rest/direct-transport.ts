import { create, type DescMessage, type DescMethodUnary, isMessage, type MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  createContextKey,
  createContextValues,
  createHandlerContext,
  type Interceptor,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { registeredMethods } from "../connect/registered-methods.ts";

/**
 * An in-process Transport that calls the registered implementations
 * directly: the request message the REST bridge built is handed to the
 * interceptors and the handler as it is, and the handler's answer comes back
 * as a message, with no binary encoding, Connect envelope or async-iterable
 * plumbing in between (profiles showed those at about a tenth of the
 * API's CPU under load).
 *
 * What a caller sees is what the Connect protocol handler gives it: the
 * same interceptors in the same order (authentication, rate limit, required
 * fields, errors, metrics), the same handler context (values, request and
 * response headers, a signal), the response headers set by interceptors and
 * handlers, and on an error the handler's response headers merged with the
 * error's metadata, as the wire would carry them. Only unary methods are
 * served; the bridge maps nothing else.
 */
export interface DirectTransportOptions {
  /** The router's interceptors, outermost first (the same list as the Connect plugin's). */
  readonly interceptors: readonly Interceptor[];
}

/**
 * The HTTP method of the bridged request (the route's own: GET, POST, PATCH,
 * DELETE), handed to the handler context as its request method, so that the
 * rules that depend on it (a member session calls with POST only) see the
 * method the client used.
 */
export const kBridgedHttpMethod = createContextKey<string>("POST", { description: "the bridged request's HTTP method" });

/** The reason the context's signal is aborted with once a call is over (an Error, so no DOMException is built per call). */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

/** Rejects when `signal` aborts (the caller's deadline), so a handler that ignores it does not hold the answer. */
function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const onAbort = () => reject(ConnectError.from(signal.reason, Code.DeadlineExceeded));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

export function createDirectTransport(routes: (router: ConnectRouter) => void, options: DirectTransportOptions): Transport {
  const methods = registeredMethods(routes);
  const interceptors = [...options.interceptors];
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
      contextValues?: ReturnType<typeof createContextValues>,
    ): Promise<UnaryResponse<I, O>> {
      const spec = methods.get(method);
      if (!spec || spec.kind !== "unary") throw new ConnectError(`${method.parent.typeName}.${method.name} is not served`, Code.Unimplemented);
      const values = contextValues ?? createContextValues();
      const context = createHandlerContext({
        service: method.parent,
        method,
        protocolName: "rest-bridge",
        requestMethod: values.get(kBridgedHttpMethod),
        url: `/${method.parent.typeName}/${method.name}`,
        requestHeader: header,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(signal ? { requestSignal: signal } : {}),
        contextValues: values,
      });
      try {
        // The bridge hands over a complete message; anything else is completed as the protocol would.
        const message = isMessage(input, method.input) ? input : create(method.input, input);
        const call = invokeUnaryImplementation(spec, context, message, interceptors);
        const output = await (signal ? Promise.race([call, abortedBy(context.signal)]) : call);
        return {
          stream: false,
          service: method.parent,
          method,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message: output as UnaryResponse<I, O>["message"],
        };
      } catch (error) {
        const connectError = ConnectError.from(error);
        // As on the wire: the answer's headers are the handler's, with the error's metadata over them.
        context.responseHeader.forEach((value, name) => {
          if (!connectError.metadata.has(name)) connectError.metadata.set(name, value);
        });
        throw connectError;
      } finally {
        context.abort(CALL_ENDED);
      }
    },
    stream() {
      return Promise.reject(new ConnectError("the direct transport serves unary methods only", Code.Unimplemented));
    },
  };
}

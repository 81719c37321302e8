import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { type ConnectRouter, createMethodImplSpec, createServiceImplSpec, type MethodImpl, type MethodImplSpec, type ServiceImpl } from "@connectrpc/connect";

/**
 * Captures what `routes` registers, as a ConnectRouter would, without building
 * protocol handlers: the methods the gRPC direct path (unary-grpc-fast-path.ts) and the REST
 * bridge's in-process transport (../rest/direct-transport.ts) call.
 */
export function registeredMethods(routes: (router: ConnectRouter) => void): Map<DescMethod, MethodImplSpec> {
  const methods = new Map<DescMethod, MethodImplSpec>();
  const router: ConnectRouter = {
    handlers: [],
    service(service: DescService, implementation: Partial<ServiceImpl<DescService>>) {
      const spec = createServiceImplSpec(service, implementation);
      for (const method of service.methods) {
        const methodSpec = spec.methods[method.localName];
        if (methodSpec) methods.set(method, methodSpec);
      }
      return router;
    },
    rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>) {
      methods.set(method, createMethodImplSpec(method, impl) as MethodImplSpec);
      return router;
    },
  };
  routes(router);
  return methods;
}

export { integrationsServiceImpl } from "./integrations-service.ts";

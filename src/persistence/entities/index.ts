import { ApiKeySchema } from "./api-key.ts";
import { CompanySchema } from "./company.ts";
import { RateLimitWindowSchema } from "./rate-limit-window.ts";

export { ApiKeySchema, type ApiKey } from "./api-key.ts";
export { CompanySchema, type Company } from "./company.ts";
export { RateLimitWindowSchema, type RateLimitWindow } from "./rate-limit-window.ts";

/** Every entity the ORM knows; passed explicitly (no folder discovery). */
export const ENTITIES = [CompanySchema, ApiKeySchema, RateLimitWindowSchema] as const;

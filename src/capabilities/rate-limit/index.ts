export type { ConsumeCommand, RateLimitDecision, RateLimiter } from "./types.ts";
export type { RateLimitWindows, WindowCount } from "./ports.ts";
export { FixedWindowRateLimiter } from "./rate-limiter.ts";
